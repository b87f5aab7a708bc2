import pg from "pg";
import { describe, expect, it } from "vitest";
import { socketDatabaseUrl } from "./target";

describe("socketDatabaseUrl", () => {
  it("keeps user, password, port, database and query, with the socket directory as host", () => {
    expect(socketDatabaseUrl("postgres://postgres@127.0.0.1:5432/chat_x", "/var/run/postgresql")).toBe(
      "postgres://postgres@%2Fvar%2Frun%2Fpostgresql:5432/chat_x",
    );
    expect(socketDatabaseUrl("postgresql://u:p%40ss@db.example:6543/chat?application_name=a", "/tmp")).toBe(
      "postgresql://u:p%40ss@%2Ftmp:6543/chat?application_name=a",
    );
  });

  it("is read by pg as a socket directory, not a host name", () => {
    const { connectionParameters: c } = new pg.Client({ connectionString: socketDatabaseUrl("postgres://postgres@127.0.0.1:5432/chat", "/var/run/postgresql") }) as unknown as {
      connectionParameters: { host: string; port: number; database: string; user: string };
    };
    expect({ host: c.host, port: c.port, database: c.database, user: c.user }).toEqual({ host: "/var/run/postgresql", port: 5432, database: "chat", user: "postgres" });
  });
});
