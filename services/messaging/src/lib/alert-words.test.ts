import { describe, expect, it } from "vitest";
import { containsAlertWord, usersAlerted } from "./alert-words";

describe("alert word matching", () => {
  it("matches whole words and phrases regardless of case", () => {
    expect(containsAlertWord("The Deploy is done", "deploy")).toBe(true);
    expect(containsAlertWord("deploy", "DEPLOY")).toBe(true);
    expect(containsAlertWord("we are on call tonight", "on call")).toBe(true);
    expect(containsAlertWord("redeploy later", "deploy")).toBe(false);
    expect(containsAlertWord("deployment", "deploy")).toBe(false);
  });

  it("accepts Zulip's punctuation around a word", () => {
    for (const text of ["(deploy)", '"deploy"', "deploy!", "deploy?", "deploy:", "**deploy**", "`deploy`", "> deploy", "[deploy]", "x,deploy;"]) {
      expect(containsAlertWord(text, "deploy"), text).toBe(true);
    }
    expect(containsAlertWord("#deploy", "deploy")).toBe(false);
    expect(containsAlertWord("deploy-bot", "deploy")).toBe(false);
  });

  it("finds a later occurrence after a non-matching one", () => {
    expect(containsAlertWord("redeploy then deploy", "deploy")).toBe(true);
  });

  it("picks the users whose words appear", () => {
    const words = new Map([
      [1, ["outage"]],
      [2, ["deploy", "release"]],
      [3, ["nothing"]],
    ]);
    expect([...usersAlerted("Release notes: outage fixed", words)].sort()).toEqual([1, 2]);
  });
});
