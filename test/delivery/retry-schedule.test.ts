import { describe, expect, it } from "vitest";
import {
  RETRY_BUDGET_MS,
  RETRY_MAX_MS,
  type RetryState,
  decide,
  parseRetryAfter,
} from "../../src/delivery/retry-schedule.ts";

const NOW = Date.UTC(2026, 10, 22);
const half = () => 0.5;

describe("retry schedule", () => {
  it.each([200, 201, 204, 299])("counts %i as delivered", (status) => {
    expect(decide({ status }, undefined, NOW, half)).toEqual({ kind: "delivered" });
  });

  it("disables the subscription on 410 Gone", () => {
    expect(decide({ status: 410 }, { failures: 3, firstFailureAt: NOW - 1_000 }, NOW, half)).toEqual({ kind: "disable" });
  });

  it.each([
    // failures so far, random, expected wait: a uniform draw up to 1 s, 2 s, 4 s, … capped at an hour
    [0, 0.5, 500],
    [1, 0.5, 1_000],
    [4, 0.5, 8_000],
    [3, 1, 8_000],
    [30, 0.5, RETRY_MAX_MS / 2],
  ])("after %i earlier failures (random %f) waits %i ms", (failures, random, wait) => {
    const state: RetryState | undefined = failures === 0 ? undefined : { failures, firstFailureAt: NOW };
    expect(decide({ status: 503 }, state, NOW, () => random)).toEqual({ kind: "retry", at: NOW + wait });
  });

  it("treats no answer (timeout, refused) like a failed status", () => {
    expect(decide({}, undefined, NOW, half)).toEqual({ kind: "retry", at: NOW + 500 });
  });

  it("never retries sooner than Retry-After, nor later than the cap because of it", () => {
    expect(decide({ status: 429, retryAfterMs: 30_000 }, undefined, NOW, half)).toEqual({ kind: "retry", at: NOW + 30_000 });
    expect(decide({ status: 429, retryAfterMs: 10 * RETRY_MAX_MS }, undefined, NOW, half)).toEqual({
      kind: "retry",
      at: NOW + RETRY_MAX_MS,
    });
  });

  it("dead-letters once the next attempt would fall past the budget since the first failure", () => {
    const state = { failures: 20, firstFailureAt: NOW - RETRY_BUDGET_MS + 60_000 };
    expect(decide({ status: 500 }, state, NOW, () => 0.01)).toEqual({ kind: "retry", at: NOW + 36_000 });
    expect(decide({ status: 500 }, state, NOW, half)).toEqual({ kind: "dead-letter" });
  });

  it("honours a configured budget", () => {
    expect(decide({ status: 500 }, { failures: 2, firstFailureAt: NOW - 5_000 }, NOW, half, 5_000)).toEqual({
      kind: "dead-letter",
    });
  });
});

describe("parseRetryAfter", () => {
  it.each([
    ["120", 120_000],
    [" 7 ", 7_000],
    [new Date(NOW + 90_000).toUTCString(), 90_000],
    [new Date(NOW - 90_000).toUTCString(), 0],
    ["soon", undefined],
    ["", undefined],
    [null, undefined],
  ])("reads %j as %j ms", (value, expected) => {
    expect(parseRetryAfter(value, NOW)).toBe(expected);
  });
});
