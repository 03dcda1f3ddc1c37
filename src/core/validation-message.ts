// Validation messages as plain words ("must be one of linux, macos, …") instead of the schema
// library's ("Expected union value"): they reach people on the approval flow and models through
// MCP, and both must be able to act on them. Pure: no I/O.
import { type ValueError, ValueErrorType } from "@sinclair/typebox/errors";
import { foldLetters } from "./screening-text";
import { patternAsWritten } from "./trimmed";

type Schema = {
  anyOf?: { const?: unknown }[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  pattern?: string;
};

/** The message of a field an object's schema does not know (additionalProperties: false); its path names the field. */
export const UNKNOWN_FIELD_MESSAGE = "is not a known field";

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * A hint when a refused enum value reads as one of the choices (`ｗｏｒｋｅｄ`, `Worked`,
 * `wor<U+200B>ked`, a Cyrillic `о` in `not_applicable`): to a person or a model the value looks
 * right, and "must be one of worked, …" alone does not say what to change. Enums are exact (the
 * value is not taken as the choice); the value is not quoted back, so nothing hidden is echoed.
 */
function readsAsChoice(value: unknown, choices: string[]): string {
  if (typeof value !== "string" || value.length > 100) return "";
  const folded = foldLetters(value).trim();
  const choice = choices.find((c) => c === folded);
  return choice === undefined
    ? ""
    : ` (the value sent reads as ${choice} but differs in case, width, invisible characters or look-alike letters: send exactly ${choice})`;
}

/**
 * A hint when a refused whole number reads as one (`５` fullwidth, `"5"` as text in a JSON body):
 * "must be a whole number" alone does not say what to change. Digits are exact (the value is not
 * taken); only the ASCII number it reads as is named, so nothing the client sent is echoed.
 */
function readsAsWholeNumber(value: unknown): string {
  if (typeof value !== "string" || value.length > 100) return "";
  const folded = value.normalize("NFKC").replace(INVISIBLE_IN_NUMBER, "").trim();
  if (!/^-?[0-9]{1,15}$/.test(folded)) return "";
  const number = String(Number(folded));
  return folded === value.trim()
    ? ` (the value sent is the text ${number}: send the number ${number}, without quotes)`
    : ` (the value sent reads as ${number} but is written with other characters than ASCII digits, or invisible ones: send ${number} in ASCII digits)`;
}

// biome-ignore lint/suspicious/noMisleadingCharacterClass: invisible characters, each dropped on its own
const INVISIBLE_IN_NUMBER = /[\p{Cf}\u034f\u115f\u1160\u3164\uffa0\ufe00-\ufe0f]/gu;

/** The message for one failing path, without the path. */
export function plainMessage(error: ValueError): string {
  const s = error.schema as Schema;
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return "is required";
    case ValueErrorType.String:
      return "must be a string";
    case ValueErrorType.Number:
      return "must be a number";
    case ValueErrorType.Integer:
      return `must be a whole number${readsAsWholeNumber(error.value)}`;
    case ValueErrorType.Boolean:
      return "must be true or false";
    case ValueErrorType.Object:
      return "must be an object";
    case ValueErrorType.Array:
      return "must be an array";
    case ValueErrorType.StringMinLength:
      return s.minLength === 1 ? "must not be empty" : `must be at least ${plural(s.minLength ?? 0, "character", "characters")}`;
    case ValueErrorType.StringMaxLength:
      return `must be at most ${plural(s.maxLength ?? 0, "character", "characters")}`;
    case ValueErrorType.StringPattern:
      return `must match the pattern ${patternAsWritten(s.pattern ?? "")}`;
    case ValueErrorType.ArrayMinItems:
      return `must have at least ${plural(s.minItems ?? 0, "item", "items")}`;
    case ValueErrorType.ArrayMaxItems:
      return `must have at most ${plural(s.maxItems ?? 0, "item", "items")}`;
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `must be at least ${s.minimum}`;
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `must be at most ${s.maximum}`;
    case ValueErrorType.NumberExclusiveMinimum:
    case ValueErrorType.IntegerExclusiveMinimum:
      return `must be more than ${s.exclusiveMinimum}`;
    case ValueErrorType.NumberExclusiveMaximum:
    case ValueErrorType.IntegerExclusiveMaximum:
      return `must be less than ${s.exclusiveMaximum}`;
    case ValueErrorType.Literal:
      return `must be ${JSON.stringify(s.const)}`;
    case ValueErrorType.ObjectAdditionalProperties:
      return UNKNOWN_FIELD_MESSAGE;
    case ValueErrorType.Union: {
      const choices = s.anyOf?.map((v) => v.const);
      if (choices?.length && choices.every((c) => typeof c === "string")) {
        return `must be one of ${choices.join(", ")}${readsAsChoice(error.value, choices as string[])}`;
      }
      return "does not match any of the allowed forms";
    }
    default:
      return error.message;
  }
}
