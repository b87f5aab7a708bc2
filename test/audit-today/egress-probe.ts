import { isPrivateAddress, reachesPrivateAddress } from "../../services/messaging/src/lib/egress";
for (const u of ["http://[::ffff:127.0.0.1]:8080/", "http://[::ffff:7f00:1]/", "http://[::ffff:10.0.0.1]/", "http://[64:ff9b::7f00:1]/", "http://[::127.0.0.1]/", "http://192.0.2.1/", "http://0177.0.0.1/", "http://2130706433/", "http://localhost./", "http://[fec0::1]/", "http://[2001:db8::1]/"]) {
  const host = new URL(u).hostname;
  console.log(u, "->", host, await reachesPrivateAddress(u).catch((e) => "ERR " + e.message));
}
console.log(isPrivateAddress("::ffff:7f00:1"));
