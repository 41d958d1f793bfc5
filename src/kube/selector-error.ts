import { ValidationError } from "../errors.ts";

/** A malformed selector: a client mistake, so a ValidationError (400) wherever it surfaces. */
export class SelectorError extends ValidationError {
  override readonly name = "SelectorError";
}
