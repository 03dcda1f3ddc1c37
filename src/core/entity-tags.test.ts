import { expect, test } from "bun:test";
import { entityTagList, ifMatchHolds, ifNoneMatchNames } from "./entity-tags";

test("a list is read tag by tag: a comma inside a tag stays in it; empty elements are skipped", () => {
  expect(entityTagList(' ,"a,b" , W/"c",,')).toEqual([
    { weak: false, opaque: '"a,b"' },
    { weak: true, opaque: '"c"' },
  ]);
  expect(entityTagList(" * ")).toBe("*");
  for (const malformed of ["", " , ", "abc", '"abc', '"a" "b"', '*, "a"', 'w/"a"', 'W/ "a"', '"a b"', "W/"]) {
    expect({ malformed, list: entityTagList(malformed) }).toEqual({ malformed, list: null });
  }
});

test("If-Match compares strongly, If-None-Match weakly", () => {
  expect(ifMatchHolds('W/"a"', '"a"')).toBe(false);
  expect(ifMatchHolds('"b", "a"', '"a"')).toBe(true);
  expect(ifMatchHolds("*", '"a"')).toBe(true);
  expect(ifMatchHolds("a", '"a"')).toBeNull();
  expect(ifNoneMatchNames('W/"a"', '"a"')).toBe(true);
  expect(ifNoneMatchNames('"a"', 'W/"a"')).toBe(true);
  expect(ifNoneMatchNames("a", '"a"')).toBe(false);
  expect(ifNoneMatchNames(null, '"a"')).toBe(false);
});
