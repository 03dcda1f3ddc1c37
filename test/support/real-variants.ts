// The external set of real error reports for the fingerprint normalizer
// (test/fixtures/fingerprint-real-variants.json, issue 16): groups of reports of one error that
// differ only in surroundings, and pairs of different errors that look alike. Gathered from public
// GitHub issue threads (each report's `source`), none of it from the retrieval dev set.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const REAL_VARIANTS_FILE = join(resolve(import.meta.dir, ".."), "fixtures/fingerprint-real-variants.json");

export interface RealReport {
  /** The report's text as the thread shows it (the error with whatever surrounds it there). */
  text: string;
  /** The issue thread it comes from. */
  source: string;
}

export interface RealGroup {
  id: string;
  ecosystem: string;
  /** The tool whose message the group is. */
  tool: string;
  reports: RealReport[];
}

export interface ApartPair {
  id: string;
  a: string;
  b: string;
  /** What tells them apart: the error class, the code, or the message (another library, symbol, header, ...). */
  differ: "class" | "code" | "message";
  source_a: string;
  source_b: string;
  note: string;
}

export interface RealVariants {
  about: string;
  version: number;
  groups: RealGroup[];
  apart: ApartPair[];
}

export function loadRealVariants(file = REAL_VARIANTS_FILE): RealVariants {
  return JSON.parse(readFileSync(file, "utf8")) as RealVariants;
}
