import type { FastifyInstance } from "fastify";
import type { Clock, Logger, Pool, Queryable } from "@chat/platform";
import type { MessagingConfig } from "./config";
import type { AccountsClient } from "./lib/accounts-client";

/** A message as stored, handed to extension hooks (attachments claim their uploads here). */
export interface SentMessageInfo {
  id: number;
  realmId: number;
  senderId: number;
  content: string;
  renderedContent: string;
  streamId: number | null;
  dateSent: Date;
}

/**
 * Extension points that run inside the sending / editing / deleting transaction, so work done there
 * (claiming uploads, releasing them) commits or rolls back with the message.
 */
export interface MessageHooks {
  onMessageSent?(tx: Queryable, message: SentMessageInfo): Promise<void>;
  /**
   * Whether onMessageSent has anything to do for this content; a send it has nothing to do for
   * is written in one statement, without the hook (without this, every send runs it).
   */
  sendNeedsHook?(realmId: number, content: string): boolean;
  onMessagesDeleted?(tx: Queryable, realmId: number, messageIds: number[]): Promise<void>;
  /** After a content edit (`message` holds the new content): the links follow the content. */
  onMessageEdited?(tx: Queryable, message: SentMessageInfo): Promise<void>;
}

export interface AppDeps {
  config: MessagingConfig;
  pool: Pool;
  log: Logger;
  clock: Clock;
  accounts: AccountsClient;
  hooks: MessageHooks;
}

/** One resource's routes. buildApp registers each plugin in the list it is given. */
export type RoutePlugin = (app: FastifyInstance, deps: AppDeps) => void;
