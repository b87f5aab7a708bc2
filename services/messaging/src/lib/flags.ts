import { MESSAGE_FLAGS, type MessageFlag } from "@chat/contracts";

/** Bits of usermessages.flags. `is_private` is internal (never shown to clients), as in Zulip. */
export const FLAG_BITS = {
  read: 1,
  starred: 2,
  collapsed: 4,
  mentioned: 8,
  stream_wildcard_mentioned: 16,
  topic_wildcard_mentioned: 32,
  has_alert_word: 64,
  historical: 128,
  is_private: 256,
} as const;
export type StoredFlag = keyof typeof FLAG_BITS;

/** The API list of a user's flags; `wildcard_mentioned` is derived (either wildcard kind). */
export function flagsToList(bits: number): MessageFlag[] {
  const out: MessageFlag[] = [];
  for (const name of MESSAGE_FLAGS) {
    if (name === "wildcard_mentioned") {
      if (bits & (FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned)) out.push(name);
    } else if (bits & FLAG_BITS[name]) {
      out.push(name);
    }
  }
  return out;
}

export function isStoredFlag(name: string): name is StoredFlag {
  return Object.prototype.hasOwnProperty.call(FLAG_BITS, name);
}
