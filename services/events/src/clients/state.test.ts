import { describe, expect, it } from "vitest";
import { parseState, stateMembers } from "./state";

describe("a state service's answer without its envelope", () => {
  it("keeps the members as they were written", () => {
    expect(stateMembers('{"result":"success","msg":"","a":1,"b":{"c":"}"}}')).toBe('"a":1,"b":{"c":"}"}');
  });

  it("is empty when the service has no state to give", () => {
    expect(stateMembers('{"result":"success","msg":""}')).toBe("");
  });

  it("leaves out the parameters the service ignored", () => {
    expect(stateMembers('{"result":"success","msg":"","a":[1],"ignored_parameters_unsupported":["x","y"]}')).toBe('"a":[1]');
  });

  it("keeps a member whose text only looks like the ignored list", () => {
    const text = '{"result":"success","msg":"","a":"\\",\\"ignored_parameters_unsupported\\":[]}"}';
    expect(JSON.parse(`{${stateMembers(text)}}`)).toEqual({ a: '","ignored_parameters_unsupported":[]}' });
  });

  it("parses an envelope in another order", () => {
    expect(stateMembers('{"a":2,"msg":"","result":"success"}')).toBe('"a":2');
  });

  it("merges slices into one state, later ones winning", () => {
    expect(parseState(['"a":1,"b":2', "", '"b":3'])).toEqual({ a: 1, b: 3 });
  });
});
