/**
 * The admin CLI: `pnpm chat <command>`. It talks to accounts' internal routes with the internal
 * token, to the public API through the gateway, and to PostgreSQL for migrations. Results go to
 * stdout (one JSON object with --json); progress and errors go to stderr.
 */
import { Command, InvalidArgumentError } from "commander";
import { ConfigError, sendMailNow } from "@chat/platform";
import { createOrg, createUser, findUsers, parseRole, resetApiKey, setBillingAdmin, setCanCreateUsers } from "./lib/accounts";
import { createChannel } from "./lib/channels";
import { CliError } from "./lib/clients";
import { loadCliConfig, type CliConfig } from "./lib/config";
import { createDemo, describeDemo } from "./lib/demo";
import { exportOrg } from "./lib/export";
import { migrateAll, waitForMigrations } from "./lib/migrate";

const log = (line: string) => process.stderr.write(`${line}\n`);

function intArg(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("expected a positive integer");
  return Number(value);
}

const listArg = (value: string): string[] =>
  value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/** Prints a result: the JSON object with --json, else the human lines. */
function output(json: boolean | undefined, data: unknown, human: string[]) {
  process.stdout.write(json ? `${JSON.stringify(data)}\n` : `${human.join("\n")}\n`);
}

let config: CliConfig | null = null;
const cfg = () => (config ??= loadCliConfig());

function action<A extends unknown[]>(fn: (...args: A) => Promise<void>) {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      if (err instanceof CliError || err instanceof ConfigError) {
        log(`error: ${err.message}`);
        process.exitCode = 1;
        return;
      }
      throw err;
    }
  };
}

const program = new Command("chat").description("Administer a team chat server").showHelpAfterError();

program
  .command("migrate")
  .description("create the database if needed and apply every service's migrations")
  .option("--wait [seconds]", "apply nothing: wait until the migrations are in (a pod's init step while the migration job runs)")
  .option("--json", "print the applied migrations as JSON")
  .action(
    action(async (opts: { json?: boolean; wait?: string | boolean }) => {
      if (opts.wait !== undefined) {
        const seconds = opts.wait === true ? 300 : intArg(String(opts.wait));
        if (!(await waitForMigrations(cfg().DATABASE_URL, seconds, log))) throw new CliError(`migrations still pending after ${seconds} s`);
        output(opts.json, { pending: {} }, ["migrations are up to date"]);
        return;
      }
      const applied = await migrateAll(cfg().DATABASE_URL, log);
      output(opts.json, { applied }, ["migrations are up to date"]);
    }),
  );

const org = program.command("org").description("organizations");
org
  .command("create")
  .description("create an organization with its first owner")
  .requiredOption("--name <name>", "organization name")
  .option("--string-id <id>", "short unique id (default: derived from the name)")
  .requiredOption("--owner-email <email>", "email of the first owner")
  .requiredOption("--owner-name <name>", "full name of the first owner")
  .option("--owner-password <password>", "password of the owner (for fetch_api_key)")
  .option("--json", "print the result as JSON")
  .action(
    action(async (o: { name: string; stringId?: string; ownerEmail: string; ownerName: string; ownerPassword?: string; json?: boolean }) => {
      const r = await createOrg(cfg(), o);
      output(o.json, r, [
        `organization ${r.realm_id} (${r.string_id}) created at ${r.realm_url}`,
        `owner ${r.owner.user_id} ${r.owner.email}`,
        `API key: ${r.owner.api_key}`,
      ]);
    }),
  );

org
  .command("export")
  .description("write an organization's public data export (as its administrators get it, without the API's limits)")
  .requiredOption("--org <id>", "organization id", intArg)
  .option("--out <file>", "where to write it, - for standard output (default: zulip-export-<id>-<date>.tar.gz here)")
  .option("--json", "print the result as JSON")
  .action(
    action(async (o: { org: number; out?: string; json?: boolean }) => {
      const file = o.out ?? `zulip-export-${o.org}-${new Date().toISOString().slice(0, 10)}.tar.gz`;
      const bytes = await exportOrg(cfg(), o.org, file);
      // With the archive on standard output, what is said goes to standard error.
      if (file === "-") process.stderr.write(`organization ${o.org} exported (${bytes} bytes)\n`);
      else output(o.json, { file, bytes }, [`organization ${o.org} exported to ${file} (${bytes} bytes)`]);
    }),
  );

const mail = program.command("mail").description("outgoing mail");
mail
  .command("test")
  .description("send a test mail now with the mail settings of this environment (EMAIL_HOST, ...)")
  .requiredOption("--to <email>", "where to send it")
  .option("--json", "print the result as JSON")
  .action(
    action(async (o: { to: string; json?: boolean }) => {
      const c = cfg();
      const externalUrl = c.EXTERNAL_URL ?? c.GATEWAY_URL;
      try {
        await sendMailNow(
          { ...c, EXTERNAL_URL: externalUrl },
          {
            to: o.to,
            subject: "Test mail from your team chat server",
            text: `This mail was sent by \`chat mail test\` on the server at ${externalUrl}.\nIf you can read it, the server's mail settings work.\n`,
          },
        );
      } catch (err) {
        throw new CliError(`mail not sent: ${(err as Error).message}`);
      }
      output(o.json, { sent: true, to: o.to, host: c.EMAIL_HOST, port: c.EMAIL_PORT }, [`test mail sent to ${o.to} through ${c.EMAIL_HOST}:${c.EMAIL_PORT}`]);
    }),
  );

const user = program.command("user").description("users and bots");
user
  .command("create")
  .description("create a user of any role, or a bot owned by a user")
  .requiredOption("--org <id>", "organization id", intArg)
  .requiredOption("--email <email>", "email (the bot's email for --bot)")
  .requiredOption("--name <full name>", "full name")
  .option("--role <role>", "owner, admin, moderator, member or guest", "member")
  .option("--password <password>", "password (for fetch_api_key)")
  .option("--bot", "create a bot")
  .option("--bot-type <type>", "1 generic, 2 incoming webhook, 3 outgoing webhook, 4 embedded", intArg, 1)
  .option("--owner <user>", "the bot's owner (email or user id); required with --bot")
  .option("--json", "print the result as JSON")
  .action(
    action(async (o: { org: number; email: string; name: string; role: string; password?: string; bot?: boolean; botType: number; owner?: string; json?: boolean }) => {
      const role = parseRole(o.role);
      let botOwnerId: number | undefined;
      if (o.bot) {
        if (!o.owner) throw new CliError("--bot needs --owner <email or user id>");
        botOwnerId = (await findUsers(cfg(), o.org, [o.owner]))[0].user_id;
      } else if (o.owner) {
        throw new CliError("--owner is only for bots (add --bot)");
      }
      const c = await createUser(cfg(), {
        realmId: o.org,
        email: o.email,
        fullName: o.name,
        role,
        password: o.password,
        botType: o.bot ? o.botType : undefined,
        botOwnerId,
      });
      output(o.json, { ...c, role, full_name: o.name }, [`${o.bot ? "bot" : "user"} ${c.user_id} ${c.email} created (role ${role})`, `API key: ${c.api_key}`]);
    }),
  );

user
  .command("billing-admin")
  .description("grant (or with --remove, take away) a user's billing role")
  .requiredOption("--org <id>", "organization id", intArg)
  .requiredOption("--user <user>", "the user's email or user id")
  .option("--remove", "take the billing role away")
  .option("--json", "print the result as JSON")
  .action(
    action(async (o: { org: number; user: string; remove?: boolean; json?: boolean }) => {
      const [found] = await findUsers(cfg(), o.org, [o.user]);
      const value = !o.remove;
      await setBillingAdmin(cfg(), o.org, found.user_id, value);
      output(o.json, { user_id: found.user_id, email: found.email, is_billing_admin: value }, [
        `${found.email} (user ${found.user_id}) ${value ? "is now" : "is no longer"} a billing administrator`,
      ]);
    }),
  );

user
  .command("can-create-users")
  .description("allow (or with --remove, disallow) an administrator to create accounts through POST /users")
  .requiredOption("--org <id>", "organization id", intArg)
  .requiredOption("--user <user>", "the user's email or user id")
  .option("--remove", "take the permission away")
  .option("--json", "print the result as JSON")
  .action(
    action(async (o: { org: number; user: string; remove?: boolean; json?: boolean }) => {
      const [found] = await findUsers(cfg(), o.org, [o.user]);
      const value = !o.remove;
      await setCanCreateUsers(cfg(), o.org, found.user_id, value);
      output(o.json, { user_id: found.user_id, email: found.email, can_create_users: value }, [
        `${found.email} (user ${found.user_id}) ${value ? "may now" : "may no longer"} create users through the API`,
      ]);
    }),
  );

const channel = program.command("channel").description("channels");
channel
  .command("create")
  .description("create a channel as an owner or administrator, subscribing members")
  .requiredOption("--org <id>", "organization id", intArg)
  .requiredOption("--name <name>", "channel name")
  .requiredOption("--as <email>", "the owner or administrator who creates it")
  .option("--api-key <key>", "their API key: go through the gateway's public API (else: internal call as them)")
  .option("--description <text>", "channel description", "")
  .option("--private", "invite-only channel")
  .option("--members <users>", "comma-separated emails or user ids to subscribe", listArg, [] as string[])
  .option("--json", "print the result as JSON")
  .action(
    action(async (o: { org: number; name: string; as: string; apiKey?: string; description: string; private?: boolean; members: string[]; json?: boolean }) => {
      const members = await findUsers(cfg(), o.org, o.members);
      const c = await createChannel(cfg(), {
        realmId: o.org,
        name: o.name,
        description: o.description,
        inviteOnly: Boolean(o.private),
        subscriberIds: members.map((m) => m.user_id),
        actor: { email: o.as, apiKey: o.apiKey },
      });
      output(o.json, c, [`channel ${c.stream_id} "${c.name}" created${o.private ? " (invite-only)" : ""}`]);
    }),
  );

const apiKey = program.command("api-key").description("API keys");
apiKey
  .command("reset")
  .description("issue a new API key; the old one stops working at once")
  .requiredOption("--org <id>", "organization id", intArg)
  .requiredOption("--email <email>", "the user's email")
  .option("--json", "print the result as JSON")
  .action(
    action(async (o: { org: number; email: string; json?: boolean }) => {
      const c = await resetApiKey(cfg(), o.org, o.email);
      output(o.json, c, [`new API key for ${c.email} (user ${c.user_id}): ${c.api_key}`]);
    }),
  );

program
  .command("demo")
  .description("create a fresh demo organization (every role, a bot, channels) and a second one")
  .option("--json", "print exactly one JSON object on stdout")
  .action(
    action(async (o: { json?: boolean }) => {
      const demo = await createDemo(cfg(), log);
      output(o.json, demo, describeDemo(demo));
    }),
  );

await program.parseAsync(process.argv);
