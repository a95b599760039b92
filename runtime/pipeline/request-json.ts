/**
 * The error `request.json()` throws for a body that is not JSON: the client's fault, a 400 that
 * HandlerHost names with the function and the step (by name, as any HandlerError).
 */
export function invalidArgOf(message: string): Error & { status: number } {
  const error = new Error(message) as Error & { status: number };
  error.name = "HandlerError";
  error.status = 400;
  return error;
}
