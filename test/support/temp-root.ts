/**
 * Every temporary folder a test run makes goes under one of its own, removed when the run ends.
 * Tests, the harness and the servers they start (which inherit the environment) all ask
 * `os.tmpdir()`, which reads TMPDIR: a run used to leave thousands of repositories and model
 * copies in /tmp (34 GB on the project's VM). Two runs at once each have their own.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  const previous = process.env.TMPDIR;
  const root = mkdtempSync(join(tmpdir(), "tensorfn-test-run-"));
  // As /tmp is: a test that runs the server as another user (the container image's, as nobody) must reach its folders.
  chmodSync(root, 0o1777);
  process.env.TMPDIR = root;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(root, { recursive: true, force: true });
  };
}
