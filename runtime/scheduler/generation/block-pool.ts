/**
 * The KV cache's blocks as accounting: which are free, which sequences hold which (block tables
 * live with the sequences), and which full blocks are cached by content for prefix sharing — a
 * block's content is its tokens after its parent block's, so a key names the parent block by id
 * and generation (a reused block gets a new generation: keys made under its old content never
 * match again). A cached block nobody holds stays cached until a fresh block is needed (evicted
 * least recently freed first). Holds no tensor data: `KvStore` does, by block index.
 */
export class BlockPool {
  readonly size: number;
  readonly blockSize: number;
  /** Holders per block (0: free or cached-and-evictable). */
  readonly #refs: Uint32Array;
  readonly #generation: Uint32Array;
  /** Free blocks never cached (or evicted), taken first. */
  readonly #free: number[] = [];
  /** Cached blocks nobody holds, least recently freed first (insertion order of a Map). */
  readonly #evictable = new Map<number, true>();
  readonly #cache = new Map<string, number>();
  readonly #keyOf = new Map<number, string>();
  #queries = 0;
  #hits = 0;

  constructor(size: number, blockSize: number) {
    if (!(size >= 1 && blockSize >= 1)) throw new RangeError(`a block pool needs at least one block of at least one token (got ${size} × ${blockSize})`);
    this.size = size;
    this.blockSize = blockSize;
    this.#refs = new Uint32Array(size);
    this.#generation = new Uint32Array(size);
    for (let b = size - 1; b >= 0; b--) this.#free.push(b);
  }

  /** Blocks a sequence could take now: free ones and cached ones nobody holds. */
  get available(): number {
    return this.#free.length + this.#evictable.size;
  }

  /** Blocks held by at least one sequence. */
  get used(): number {
    return this.size - this.available;
  }

  /** Prefix-cache lookups and hits, in tokens (vLLM's prefix_cache_queries / _hits). */
  get prefixStats(): { queries: number; hits: number } {
    return { queries: this.#queries, hits: this.#hits };
  }

  /** Sum of holders over all blocks (a test's invariant: the sum of every block table's length). */
  get references(): number {
    let sum = 0;
    for (const r of this.#refs) sum += r;
    return sum;
  }

  /** How many sequences hold `block` now. */
  holders(block: number): number {
    return this.#refs[block]!;
  }

  /** Takes `count` blocks for one holder; throws when fewer are available (the planner checks first). */
  allocate(count: number): number[] {
    if (count > this.available) throw new RangeError(`block pool: ${count} blocks asked, ${this.available} available`);
    const blocks: number[] = [];
    for (let i = 0; i < count; i++) {
      let block = this.#free.pop();
      if (block === undefined) {
        block = this.#evictable.keys().next().value!;
        this.#evictable.delete(block);
        this.#cache.delete(this.#keyOf.get(block)!);
        this.#keyOf.delete(block);
      }
      this.#generation[block]!++;
      this.#refs[block] = 1;
      blocks.push(block);
    }
    return blocks;
  }

  /** Gives back one holder's blocks (a block table), last first so a prefix's tail is evicted before its head. */
  release(blocks: readonly number[]): void {
    for (let i = blocks.length - 1; i >= 0; i--) {
      const block = blocks[i]!;
      if (this.#refs[block] === 0) throw new Error(`block pool: block ${block} released twice`);
      if (--this.#refs[block]! > 0) continue;
      if (this.#keyOf.has(block)) this.#evictable.set(block, true);
      else this.#free.push(block);
    }
  }

  /** Counts one prefix-cache query of `queried` tokens, `hit` of them found cached (vLLM's counters). */
  counted(queried: number, hit: number): void {
    this.#queries += queried;
    this.#hits += hit;
  }

  /** The cached blocks that hold the first full blocks of `tokens`, longest run first; at most `maxBlocks`. Looks only (`claim` takes them). */
  lookup(tokens: ArrayLike<number>, maxBlocks: number): number[] {
    const found: number[] = [];
    let parent = "";
    for (let b = 0; b < maxBlocks; b++) {
      const block = this.#cache.get(this.#key(parent, tokens, b));
      if (block === undefined) break;
      found.push(block);
      parent = `${block}.${this.#generation[block]}`;
    }
    return found;
  }

  /** How many of `blocks` (cached ones) nobody holds now: claiming them takes them from `available`. */
  idleAmong(blocks: readonly number[]): number {
    let n = 0;
    for (const b of blocks) if (this.#refs[b] === 0) n++;
    return n;
  }

  /** Takes one more hold on cached blocks (a prefix hit). */
  claim(blocks: readonly number[]): void {
    for (const block of blocks) {
      if (this.#refs[block]++ === 0) this.#evictable.delete(block);
    }
  }

  /**
   * Records that block `index` of a table (`table[index]`, now full) holds `tokens[index * size …]`
   * after the blocks before it, so later prompts with that prefix share it. A content already cached
   * under another block keeps the first.
   */
  register(table: readonly number[], index: number, tokens: ArrayLike<number>): void {
    const block = table[index]!;
    if (this.#keyOf.has(block)) return;
    const parent = index === 0 ? "" : `${table[index - 1]}.${this.#generation[table[index - 1]!]}`;
    const key = this.#key(parent, tokens, index);
    if (this.#cache.has(key)) return;
    this.#cache.set(key, block);
    this.#keyOf.set(block, key);
  }

  #key(parent: string, tokens: ArrayLike<number>, index: number): string {
    let key = parent;
    const start = index * this.blockSize;
    for (let i = start; i < start + this.blockSize; i++) key += `,${tokens[i]}`;
    return key;
  }
}
