import { expect, test } from "bun:test";
import { InMemoryQuotaCounters } from "../store/single-process";
import { ServiceError } from "./errors";
import { operationOfRoute, Quotas, quotaHeaders } from "./quotas";

test("the table maps each metered route to its operation, and nothing else", () => {
  expect(operationOfRoute("POST", "/v1/trails")).toBe("publishTrail");
  expect(operationOfRoute("POST", "/v1/drafts/abc_DEF-123/publish")).toBe("publishDraft");
  expect(operationOfRoute("POST", "/v1/drafts")).toBe("createDraft");
  expect(operationOfRoute("GET", "/v1/trails")).toBeNull();
  expect(operationOfRoute("POST", "/v1/trails/x/outcomes")).toBeNull();
  expect(operationOfRoute("POST", "/v1/drafts/a/b/publish")).toBeNull();
  expect(operationOfRoute("POST", "/v1/drafts/x/discard")).toBeNull();
  expect(operationOfRoute("POST", "/mcp")).toBeNull();
});

test("publishing and approving share the publish quota; drafts have their own; refusals carry the code", async () => {
  let now = 0;
  const quotas = new Quotas({ general: 5, publish: 2, draft: 1 }, new InMemoryQuotaCounters(() => now));
  expect(await quotas.admit("publishTrail", "a")).toMatchObject({ limit: 2, remaining: 2 });
  await quotas.take("publishTrail", "a");
  await quotas.take("publishDraft", "a");
  const refused = await quotas.admit("publishDraft", "a").catch((e) => e);
  expect(refused).toBeInstanceOf(ServiceError);
  expect([refused.code, refused.status, refused.headers["Retry-After"]]).toEqual(["publish_limited", 429, "3600"]);
  expect(await quotas.admit("createDraft", "a")).toMatchObject({ limit: 1, remaining: 1 });
  await quotas.take("createDraft", "a");
  expect((await quotas.admit("createDraft", "a").catch((e) => e)).code).toBe("draft_limited");
  expect(await quotas.admit("createDraft", "b")).toMatchObject({ remaining: 1 });
  expect(quotas.routeState("POST", "/v1/drafts/x/publish", "a")).toMatchObject({ allowed: false, remaining: 0 });
  expect(quotas.routeState("GET", "/v1/feed", "a")).toBeNull();
  expect(quotas.takeGeneral("a")).toMatchObject({ allowed: true, limit: 5, remaining: 4, reset: 60 });
  now += 3600_000;
  expect(await quotas.admit("publishTrail", "a")).toMatchObject({ remaining: 2 });
});

test("headers carry limit, remaining and reset seconds", () => {
  expect(quotaHeaders({ limit: 600, remaining: 599, reset: 60 })).toEqual({
    "RateLimit-Limit": "600",
    "RateLimit-Remaining": "599",
    "RateLimit-Reset": "60",
  });
});

test("take counts and refuses in one step: a burst of concurrent takes is held to the limit", async () => {
  const quotas = new Quotas({ general: 100, publish: 3, draft: 1 }, new InMemoryQuotaCounters(() => 0));
  const results = await Promise.all(
    Array.from({ length: 20 }, () =>
      quotas.take("publishTrail", "a").then(
        () => "taken",
        (e) => e.code,
      ),
    ),
  );
  expect(results.filter((r) => r === "taken").length).toBe(3);
  expect(results.filter((r) => r === "publish_limited").length).toBe(17);
});
