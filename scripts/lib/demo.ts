import { randomBytes } from "node:crypto";
import { ROLES } from "@chat/platform";
import { createOrg, createUser, setCanCreateUsers, type Credentials } from "./accounts";
import { channelsSupported, createChannel } from "./channels";
import type { CliConfig } from "./config";

export interface DemoUser {
  user_id: number;
  email: string;
  api_key: string;
  role: number;
  full_name: string;
}

export interface DemoChannel {
  stream_id: number;
  name: string;
}

export interface DemoOrg {
  id: number;
  name: string;
  /** The organization's own URL, only with ORGANIZATION_SUBDOMAINS (otherwise it is base_url). */
  url?: string;
  users: Record<string, DemoUser>;
  channels: Record<string, DemoChannel>;
}

export interface DemoOutput {
  base_url: string;
  orgs: [DemoOrg, DemoOrg];
}

/** The people of the main demo organization; the bot is owned by `member`. */
const PEOPLE = [
  { key: "admin", local: "admin", fullName: "Ada Admin", role: ROLES.administrator },
  { key: "moderator", local: "moderator", fullName: "Milo Moderator", role: ROLES.moderator },
  { key: "member", local: "member", fullName: "Mara Member", role: ROLES.member },
  { key: "member2", local: "member2", fullName: "Max Member", role: ROLES.member },
  { key: "guest", local: "guest", fullName: "Gil Guest", role: ROLES.guest },
] as const;

const GENERIC_BOT = 1;

const asDemoUser = (c: Credentials, role: number, fullName: string): DemoUser => ({
  user_id: c.user_id,
  email: c.email,
  api_key: c.api_key,
  role,
  full_name: fullName,
});

async function newOrg(cfg: CliConfig, name: string, stringId: string, domain: string) {
  const ownerName = "Olive Owner";
  const created = await createOrg(cfg, { name, stringId, ownerEmail: `owner@${domain}`, ownerName });
  return { realmId: created.realm_id, url: created.realm_url, owner: asDemoUser(created.owner, ROLES.owner, ownerName) };
}

/**
 * A fresh demo organization with one user per role, a bot and two channels, plus a second
 * organization for isolation checks. Every call uses new names, so runs never collide.
 */
export async function createDemo(cfg: CliConfig, log: (line: string) => void): Promise<DemoOutput> {
  const stamp = `${Date.now().toString(36)}${randomBytes(2).toString("hex")}`;
  const withChannels = channelsSupported();
  if (!withChannels) log("this build has no channel routes yet; the demo has no channels");

  const name = `Demo ${stamp}`;
  const domain = `demo-${stamp}.example.com`;
  log(`creating organization "${name}"`);
  const main = await newOrg(cfg, name, `demo-${stamp}`, domain);
  const users: Record<string, DemoUser> = { owner: main.owner };
  for (const person of PEOPLE) {
    const c = await createUser(cfg, { realmId: main.realmId, email: `${person.local}@${domain}`, fullName: person.fullName, role: person.role });
    users[person.key] = asDemoUser(c, person.role, person.fullName);
  }
  // So that every endpoint can be tried: POST /users needs the operator's permission besides the role.
  for (const key of ["owner", "admin"]) await setCanCreateUsers(cfg, main.realmId, users[key].user_id, true);
  const botName = "Demo Bot";
  const bot = await createUser(cfg, {
    realmId: main.realmId,
    email: `demo-bot@${domain}`,
    fullName: botName,
    role: ROLES.member,
    botType: GENERIC_BOT,
    botOwnerId: users.member.user_id,
  });
  users.bot = asDemoUser(bot, ROLES.member, botName);
  const ordered = Object.fromEntries(["owner", "admin", "moderator", "member", "member2", "guest", "bot"].map((k) => [k, users[k]]));

  const channels: Record<string, DemoChannel> = {};
  const actor = { email: main.owner.email, userId: main.owner.user_id, apiKey: main.owner.api_key };
  if (withChannels) {
    log("creating channels through the gateway");
    const everyone = ["admin", "moderator", "member", "member2", "guest", "bot"].map((k) => users[k].user_id);
    channels.public = await createChannel(cfg, { realmId: main.realmId, name: "town square", description: "Everyone is here.", inviteOnly: false, subscriberIds: everyone, actor });
    const team = [users.admin.user_id, users.member.user_id];
    channels.private = await createChannel(cfg, { realmId: main.realmId, name: "core team", description: "Invite only.", inviteOnly: true, subscriberIds: team, actor });
  }

  const name2 = `Demo ${stamp} (second)`;
  const domain2 = `demo-${stamp}-2.example.com`;
  log(`creating organization "${name2}"`);
  const second = await newOrg(cfg, name2, `demo-${stamp}-2`, domain2);
  const member2 = await createUser(cfg, { realmId: second.realmId, email: `member@${domain2}`, fullName: "Mara Member", role: ROLES.member });
  await setCanCreateUsers(cfg, second.realmId, second.owner.user_id, true);
  const users2 = { owner: second.owner, member: asDemoUser(member2, ROLES.member, "Mara Member") };
  const channels2: Record<string, DemoChannel> = {};
  if (withChannels) {
    const actor2 = { email: second.owner.email, userId: second.owner.user_id, apiKey: second.owner.api_key };
    channels2.public = await createChannel(cfg, { realmId: second.realmId, name: "town square", description: "Everyone is here.", inviteOnly: false, subscriberIds: [users2.member.user_id], actor: actor2 });
  }

  const base = cfg.EXTERNAL_URL ?? cfg.GATEWAY_URL;
  // The agreed shape names one URL; an organization's own appears only where it differs.
  const own = (url: string) => (url === base.replace(/\/+$/, "") ? {} : { url });
  return {
    base_url: base,
    orgs: [
      { id: main.realmId, name, ...own(main.url), users: ordered, channels },
      { id: second.realmId, name: name2, ...own(second.url), users: users2, channels: channels2 },
    ],
  };
}

/** The demo as lines for a person: every user's email and API key, every channel. */
export function describeDemo(demo: DemoOutput): string[] {
  const lines = [`Server: ${demo.base_url}`];
  for (const o of demo.orgs) {
    lines.push("", `Organization ${o.id}: ${o.name}${o.url ? ` at ${o.url}` : ""}`);
    for (const [key, u] of Object.entries(o.users)) {
      lines.push(`  ${key.padEnd(9)} ${u.email.padEnd(44)} API key ${u.api_key}  (user ${u.user_id}, role ${u.role})`);
    }
    for (const [key, c] of Object.entries(o.channels)) lines.push(`  channel ${key.padEnd(8)} #${c.name} (id ${c.stream_id})`);
  }
  return lines;
}
