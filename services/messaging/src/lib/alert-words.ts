/**
 * Whether a message's Markdown contains an alert word, Zulip's way: case-insensitive, and only
 * as a whole word or phrase, i.e. bounded by the start or end of the text, whitespace or one
 * of a few punctuation marks.
 */
const BEFORE = new Set([" ", "\n", "\t", "(", '"', ".", ",", "'", ";", "[", "*", "`", ">"]);
const AFTER = new Set([" ", "\n", "\t", ")", '"', "?", ":", ".", ",", "'", ";", "]", "!", "*", "`"]);

export function containsAlertWord(content: string, word: string): boolean {
  const text = content.toLowerCase();
  const needle = word.toLowerCase();
  if (!needle) return false;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) {
    const before = at === 0 || BEFORE.has(text[at - 1]);
    const end = at + needle.length;
    const after = end === text.length || AFTER.has(text[end]);
    if (before && after) return true;
  }
  return false;
}

/** The users (of `wordsByUser`) with at least one alert word in `content`. */
export function usersAlerted(content: string, wordsByUser: Map<number, string[]>): Set<number> {
  const out = new Set<number>();
  for (const [userId, words] of wordsByUser) if (words.some((w) => containsAlertWord(content, w))) out.add(userId);
  return out;
}
