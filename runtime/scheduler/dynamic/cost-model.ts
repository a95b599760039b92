/**
 * The cost of one execution as a function of its rows, `cost(n) = a·n + b`, fitted online by
 * least squares over exponentially forgotten samples (recent executions weigh most, so the fit
 * follows a machine that speeds up or slows down). `b` is what every execution pays whatever its
 * size (the hop to the instance, launching the graph); `a` is the price of one more row. The
 * adaptive batcher waits for a fuller batch only when `b` makes that worth it.
 */
export class CostModel {
  readonly #keep: number;
  #w = 0;
  #sn = 0;
  #st = 0;
  #snn = 0;
  #snt = 0;

  /** `halfLife`: executions after which a sample weighs half as much. */
  constructor(options: { halfLife?: number } = {}) {
    this.#keep = Math.pow(0.5, 1 / (options.halfLife ?? 64));
  }

  /** Executions seen, forgotten ones discounted. */
  get weight(): number {
    return this.#w;
  }

  /** Records one execution of `rows` rows that took `ms`. */
  observe(rows: number, ms: number): void {
    const k = this.#keep;
    this.#w = this.#w * k + 1;
    this.#sn = this.#sn * k + rows;
    this.#st = this.#st * k + ms;
    this.#snn = this.#snn * k + rows * rows;
    this.#snt = this.#snt * k + rows * ms;
  }

  /**
   * The fitted coefficients (never negative); undefined before any execution. While every
   * execution had the same size the split is unknown: half fixed, half per row, until sizes vary.
   */
  fit(): { a: number; b: number } | undefined {
    if (this.#w === 0) return undefined;
    const meanN = this.#sn / this.#w;
    const meanT = this.#st / this.#w;
    const varN = this.#snn / this.#w - meanN * meanN;
    if (varN < 1e-3 * Math.max(1, meanN * meanN)) return { a: meanT / (2 * meanN), b: meanT / 2 };
    const a = Math.max(0, (this.#snt / this.#w - meanN * meanT) / varN);
    const b = Math.max(0, meanT - a * meanN);
    return { a, b };
  }

  /** Expected milliseconds for `rows` rows; 0 before any execution. */
  predict(rows: number): number {
    const f = this.fit();
    return f ? f.a * rows + f.b : 0;
  }
}
