import { describe, expect, it } from "vitest";
import { digestMail, digestWeekday, digestWindowStart, lastWeekStart, pickHotTopics } from "./digest-email";

const topic = (id: number, messages: number, senders: number) => ({ streamId: 1, streamName: "c", topic: `t${id}`, messages, senders, firstMessageId: id });

describe("digest email rules", () => {
  it("numbers weekdays from Monday, in UTC", () => {
    expect(digestWeekday(new Date("2024-06-03T00:00:00Z"))).toBe(0);
    expect(digestWeekday(new Date("2024-06-09T23:59:59Z"))).toBe(6);
  });

  it("a digest made since the start of the UTC day six days ago is this week's", () => {
    expect(lastWeekStart(new Date("2024-06-10T00:05:00Z")).toISOString()).toBe("2024-06-04T00:00:00.000Z");
  });

  it("covers the time since the last activity, at most a week", () => {
    const now = new Date("2024-06-10T00:00:00Z");
    expect(digestWindowStart(now, null).toISOString()).toBe("2024-06-03T00:00:00.000Z");
    expect(digestWindowStart(now, new Date("2024-05-01T00:00:00Z")).toISOString()).toBe("2024-06-03T00:00:00.000Z");
    expect(digestWindowStart(now, new Date("2024-06-04T12:00:00Z")).toISOString()).toBe("2024-06-04T12:00:00.000Z");
  });

  it("hot topics: the two with most senders, then the longest, four at most", () => {
    const topics = [topic(1, 50, 1), topic(2, 3, 3), topic(3, 2, 4), topic(4, 10, 1), topic(5, 9, 2), topic(6, 1, 1)];
    expect(pickHotTopics(topics).map((t) => t.topic)).toEqual(["t3", "t2", "t1", "t4"]);
    expect(pickHotTopics([topic(1, 1, 1)]).map((t) => t.topic)).toEqual(["t1"]);
  });

  it("nothing to tell: no mail", () => {
    expect(digestMail({ realmName: "R", realmUrl: "https://r.test", fullName: "A", conversations: [], newChannels: [], newUsers: 0 })).toBeNull();
  });

  it("names five new channels and counts the rest", () => {
    const newChannels = Array.from({ length: 7 }, (_, i) => ({ id: i + 1, name: `new ${i}` }));
    const mail = digestMail({ realmName: "R", realmUrl: "https://r.test", fullName: "A", conversations: [], newChannels, newUsers: 1 })!;
    expect(mail.text).toContain("#new 0: https://r.test/#narrow/channel/1-new-0\n");
    expect(mail.text).not.toContain("#new 5");
    expect(mail.text).toContain("… and 2 more channels");
    expect(mail.text).toContain("1 new person joined R.");
  });
});
