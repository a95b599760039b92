/**
 * A set of bearer keys that answers "is this one of them?" in time independent of which key, if
 * any, matches and of how many leading bytes agree. Only SHA-256 digests are kept, so the keys
 * themselves never sit in a field a log line or a heap dump could print.
 */
export class KeySet {
  readonly #digests: Uint8Array[];

  private constructor(digests: Uint8Array[]) {
    this.#digests = digests;
  }

  /** Digests `keys` once, at startup. An empty list is a set nothing matches. */
  static async create(keys: readonly string[]): Promise<KeySet> {
    return new KeySet(await Promise.all(keys.map(digest)));
  }

  get size(): number {
    return this.#digests.length;
  }

  /** True when `key` is in the set; compares against every digest, never stopping early. */
  async has(key: string): Promise<boolean> {
    const candidate = await digest(key);
    let found = false;
    for (const d of this.#digests) found = timingSafeEqual(candidate, d) || found;
    return found;
  }
}

/**
 * Byte-wise equality whose running time depends only on the lengths: every byte pair is XORed
 * into one accumulator, so a mismatch in the first byte costs as much as one in the last.
 */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  let diff = 0;
  for (let i = 0; i < a.byteLength; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

/**
 * Keys from a key file's text: one per line; blank lines and `#` comments are skipped. Throws a
 * plain message naming the line (never its content) when a line cannot travel in a header.
 */
export function parseKeyFile(text: string, file: string): string[] {
  const keys: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const key = line.trim();
    if (key === "" || key.startsWith("#")) return;
    // RFC 6750's b64token characters: what an Authorization: Bearer header can carry verbatim.
    if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(key)) throw new Error(`${file}:${i + 1}: a key may hold only letters, digits and - . _ ~ + / (then = padding)`);
    keys.push(key);
  });
  if (keys.length === 0) throw new Error(`${file}: no keys (one per line; # starts a comment)`);
  return keys;
}
