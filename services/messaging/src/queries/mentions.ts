import type { AppDeps } from "../deps";
import { compileLinkifiers } from "../lib/linkifiers";
import { emptyDirectory, renderMarkdown, scanMentionCandidates, type MentionDirectory } from "../lib/markdown";
import { selectActiveRealmEmojiByNames } from "../store/realm-emoji";
import { selectStreamsByNames } from "../store/streams";
import { selectUserSubscriptions } from "../store/subscriptions";
import { emojiImagePath } from "./realm-emoji";
import { canSeeStream, type Viewer } from "./streams";
import { getActiveUsersByNames, getUsersByIds } from "./users";

/**
 * Looks up every user, group and channel the content's mention syntax names, as `viewer` may
 * see them (`everyChannel`: any active channel, for the notification bot), the custom emoji it
 * names, and the organization's linkifiers (and default code language, when a fence names
 * none): everything rendering needs.
 */
export async function buildMentionDirectory(deps: AppDeps, viewer: Viewer, content: string, everyChannel = false): Promise<MentionDirectory> {
  const dir = emptyDirectory();
  const scan = scanMentionCandidates(content);
  dir.linkifiers = compileLinkifiers(await deps.accounts.getLinkifiers(viewer.realmId));
  const byName = await getActiveUsersByNames(deps, viewer.realmId, scan.userNames);
  for (const u of byName) {
    const key = u.fullName.toLowerCase();
    const list = dir.usersByName.get(key) ?? [];
    list.push({ id: u.id, fullName: u.fullName, botType: u.botType });
    dir.usersByName.set(key, list);
  }
  if (scan.userIds.length > 0) {
    for (const u of (await getUsersByIds(deps, viewer.realmId, scan.userIds)).values()) {
      if (u.isActive) dir.usersById.set(u.id, { id: u.id, fullName: u.fullName, botType: u.botType });
    }
  }
  if (scan.groupNames.length > 0) {
    const wanted = new Set(scan.groupNames);
    for (const g of await deps.accounts.getUserGroups(viewer.realmId)) {
      // System groups (role:...) cannot be mentioned.
      if (wanted.has(g.name.toLowerCase()) && !g.is_system_group) dir.groupsByName.set(g.name.toLowerCase(), { id: g.id, name: g.name });
    }
  }
  if (scan.streamNames.length > 0) {
    const streams = await selectStreamsByNames(deps.pool, viewer.realmId, scan.streamNames);
    const subs = new Map((await selectUserSubscriptions(deps.pool, viewer.realmId, viewer.userId)).map((s) => [s.streamId, s]));
    for (const s of streams) {
      if (everyChannel ? !s.deactivated : canSeeStream(viewer, s, subs.get(s.id))) dir.streamsByName.set(s.name.toLowerCase(), { id: s.id, name: s.name });
    }
  }
  if (scan.emojiNames.length > 0) {
    for (const e of await selectActiveRealmEmojiByNames(deps.pool, viewer.realmId, scan.emojiNames)) {
      dir.customEmoji.set(e.name, emojiImagePath(e.realmId, e.fileName));
    }
  }
  if (BARE_FENCE.test(content)) dir.defaultCodeBlockLanguage = (await deps.accounts.getRealm(viewer.realmId)).settings.default_code_block_language ?? "";
  return dir;
}

/**
 * A channel description's HTML: Zulip renders it with the organization's Markdown as a message
 * (custom emoji, linkifiers, mentions, links to channels `viewer`, who sets it, may see), but
 * with no image previews.
 */
export async function renderChannelDescription(deps: AppDeps, viewer: Viewer, description: string): Promise<string> {
  return renderMarkdown(description, await buildMentionDirectory(deps, viewer, description), { previews: false }).html;
}

/**
 * A line ending in a fence that names no language, where the organization's default applies
 * (closing fences match too: the realm's settings are cached).
 */
const BARE_FENCE = /(?:```|~~~)[ \t]*$/m;
