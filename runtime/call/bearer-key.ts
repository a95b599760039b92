import type { HeaderLookup } from "./direct-body.ts";

/**
 * The key a call presents (`Authorization: Bearer <key>`): undefined without the header,
 * `malformed` with one of another form. Access control and region ownership read it alike.
 */
export function bearerKey(header: HeaderLookup): string | undefined | { malformed: true } {
  const authorization = header("authorization");
  if (authorization === undefined) return undefined;
  return /^Bearer +(\S+) *$/i.exec(authorization)?.[1] ?? { malformed: true };
}
