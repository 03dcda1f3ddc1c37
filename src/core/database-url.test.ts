import { describe, expect, test } from "bun:test";
import { DatabaseUrlError, parseDatabaseUrl } from "./database-url";

describe("parseDatabaseUrl", () => {
  test("one host: the URL as written, default port 5432", () => {
    const url = "postgres://colony:s3cret@db.internal/colony?sslmode=require";
    expect(parseDatabaseUrl(url)).toEqual({
      hosts: [{ host: "db.internal", port: 5432, url }],
      targetSessionAttrs: "any",
      description: "colony@db.internal/colony",
    });
    expect(parseDatabaseUrl("postgresql://u@[::1]:6543/d").hosts).toEqual([
      { host: "::1", port: 6543, url: "postgresql://u@[::1]:6543/d" },
    ]);
    expect(parseDatabaseUrl("postgres://u@h/d?target_session_attrs=read-write").targetSessionAttrs).toBe("read-write");
  });

  test("several hosts: one URL per host, in the order written, target_session_attrs taken out", () => {
    const t = parseDatabaseUrl(
      "postgres://colony:pw@db1:5432,db2,[fd00::2]:5433/colony?sslmode=prefer&target_session_attrs=read-write&application_name=x",
    );
    expect(t.targetSessionAttrs).toBe("read-write");
    expect(t.hosts).toEqual([
      { host: "db1", port: 5432, url: "postgres://colony:pw@db1:5432/colony?sslmode=prefer&application_name=x" },
      { host: "db2", port: 5432, url: "postgres://colony:pw@db2:5432/colony?sslmode=prefer&application_name=x" },
      { host: "fd00::2", port: 5433, url: "postgres://colony:pw@[fd00::2]:5433/colony?sslmode=prefer&application_name=x" },
    ]);
    expect(t.description).toBe("colony@db1:5432,db2,[fd00::2]:5433/colony");
    expect(t.description).not.toContain("pw");
    expect(parseDatabaseUrl("postgres://a,b/d?target_session_attrs=PRIMARY").targetSessionAttrs).toBe("primary");
    expect(parseDatabaseUrl("postgres://a,b/d").targetSessionAttrs).toBe("any");
  });

  test("libpq's sslmode values and %XX escapes are accepted", () => {
    for (const mode of ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]) {
      expect(parseDatabaseUrl(`postgres://u@h/d?sslmode=${mode}`).hosts).toHaveLength(1);
    }
    expect(parseDatabaseUrl("postgres://us%40er:p%2Fw@h/colony%5Fdb").description).toBe("us@er@h/colony%5Fdb");
  });

  const refused: [string, RegExp][] = [
    ["mysql://u@h/d", /postgres:\/\//],
    ["postgres://u@h/d?target_session_attrs=standby", /standby is not supported.*writes/],
    ["postgres://u@a,b/d?target_session_attrs=prefer-standby", /not supported/],
    ["postgres://u@a,b/d?target_session_attrs=read-only", /not supported/],
    ["postgres://u@a,b/d?target_session_attrs=sometimes", /use any, read-write, primary/],
    ["postgres://u@a,b/d?target_session_attrs=any&target_session_attrs=primary", /more than once/],
    ["postgres://u@a,b/d?load_balance_hosts=random", /load_balance_hosts=random/],
    ["postgres://u@a,,b/d", /host 2 of the list is empty/],
    ["postgres://u@a:5432,b:99999/d", /port of "b:99999"/],
    ["postgres://u@a:5432,b:x/d", /"b:x" is not host/],
    ["postgres://u@a:5432,a:5432/d", /listed twice/],
    ["postgres://u@a,b/d?host=c", /host= in the query/],
    ["postgres://u@h/d?host=a,b&port=1,2", /a list in host=/],
    ["postgres://u@h:port/d", /not a valid URL/],
    ["postgres://u@h/d?sslmode=bogus", /sslmode=bogus is not one of disable, allow, prefer, require, verify-ca, verify-full/],
    ["postgres://u@a,b/d?sslmode=require&sslmode=disable", /sslmode is given more than once/],
    ["postgres://%zz@h/d", /the user name or password has a %/],
    ["postgres://u:p%ZZ@a,b/d", /the user name or password has a %/],
    ["postgres://u@h/d%e9", /the database name has a %/],
  ];
  for (const [url, why] of refused) {
    test(`refused: ${url}`, () => {
      expect(() => parseDatabaseUrl(url)).toThrow(DatabaseUrlError);
      expect(() => parseDatabaseUrl(url)).toThrow(why);
    });
  }

  test("the password is in no message", () => {
    for (const url of [
      "postgres://u:hunter2@a,,b/d",
      "postgres://u:hunter2@a:1,b:x/d",
      "postgres://u:hunter2@a,b/d?target_session_attrs=standby",
      "postgres://u:hunter2%G1@h/d",
    ]) {
      expect(() => parseDatabaseUrl(url)).toThrow(DatabaseUrlError);
      try {
        parseDatabaseUrl(url);
      } catch (err) {
        expect((err as Error).message).not.toContain("hunter2");
      }
    }
  });
});
