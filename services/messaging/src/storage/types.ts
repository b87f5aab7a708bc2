import type { Readable } from "node:stream";

/** Bytes `start` to `end` of a file, both included. */
export interface ByteRange {
  start: number;
  end: number;
}

/** A stored file being read back. */
export interface StoredFile {
  stream: Readable;
  size: number;
}

/**
 * Where upload bytes live. Keys are attachment path ids (`<realm>/<xx>/<random>/<name>`).
 * Implementations stream in both directions; nothing holds a whole file in memory.
 */
export interface FileStorage {
  readonly kind: string;
  /**
   * Streams `body` into `key`. Throws FileTooLargeError (leaving nothing stored) when the body
   * is longer than `maxBytes`. Resolves with the stored size.
   */
  put(key: string, body: Readable, opts: { contentType: string; maxBytes: number }): Promise<{ size: number }>;
  /**
   * Null when there is no such file. With `range`, the stream holds bytes `start` to `end`
   * (inclusive, within the file) and `size` is still the whole file's.
   */
  get(key: string, range?: ByteRange): Promise<StoredFile | null>;
  /** Removes the file; removing a missing file is not an error. */
  delete(key: string): Promise<void>;
  /** Rejects when the storage cannot be used (for `/ready`). */
  check(): Promise<void>;
}

export class FileTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`File is larger than ${maxBytes} bytes`);
  }
}
