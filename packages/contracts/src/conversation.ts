/**
 * The `to` Zulip shows for a direct-message draft or scheduled message: the conversation's other
 * participants in id order, the user themself only for a message to themself, however the
 * client listed them (duplicates and the user included). Empty stays empty.
 */
export function directMessageTo(selfId: number, ids: number[]): number[] {
  if (ids.length === 0) return [];
  const others = [...new Set(ids)].filter((id) => id !== selfId).sort((a, b) => a - b);
  return others.length > 0 ? others : [selfId];
}
