import { lookup, type LookupAddress, type LookupAllOptions } from "node:dns";
import type { LookupFunction } from "node:net";
import { Agent, fetch as undiciFetch } from "undici";

/** The code of the error a guarded connection fails with (the `cause` of fetch's TypeError). */
export const REFUSED_ADDRESS = "EREFUSEDADDRESS";

/**
 * A name resolved as `net.connect` asks, refused when any of its addresses is one `refused` says
 * no to: the address checked is the one connected to, so a name that resolves to a public
 * address when checked and to a private one a moment later (DNS rebinding) is still refused.
 */
function guardedLookup(refused: (address: string) => boolean): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...(options as LookupAllOptions), all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, "", 0);
      const bad = addresses.find((a) => refused(a.address));
      if (bad || addresses.length === 0) {
        const error = Object.assign(new Error(`refused address ${bad?.address ?? "(none)"} for ${hostname}`), { code: REFUSED_ADDRESS });
        return callback(error, "", 0);
      }
      if ((options as LookupAllOptions).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/**
 * A fetch whose connections never reach an address `refused` says no to (names are checked at
 * connect time; a URL holding an address literal connects without a lookup, so check those
 * before the call). For requests a user aims: outgoing webhooks.
 */
export function guardedFetch(refused: (address: string) => boolean): typeof fetch {
  const dispatcher = new Agent({ connect: { lookup: guardedLookup(refused) } });
  // Typed as the global fetch: undici's Response has all its callers read (status, headers, the
  // body's stream), though its types lack methods added since (`bytes`).
  return ((input: Parameters<typeof undiciFetch>[0], init: Parameters<typeof undiciFetch>[1] = {}) =>
    undiciFetch(input, { ...init, dispatcher })) as unknown as typeof fetch;
}

/** Whether a fetch failed because its connection was refused by a guarded lookup. */
export function isRefusedAddress(err: unknown): boolean {
  return (err as { cause?: { code?: string } } | null)?.cause?.code === REFUSED_ADDRESS;
}
