/** Why a benchmark cannot run: bad arguments (exit code 2) or a server it cannot use (exit code 1). */
export class BenchError extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode = 2) {
    super(message);
    this.name = "BenchError";
    this.exitCode = exitCode;
  }
}
