/**
 * The part of zulip-js (which ships no types) that test/e2e/zulip-js.test.ts calls. Every
 * method answers the parsed JSON body, error envelopes included (zulip-js does not throw them).
 */
declare module "zulip-js" {
  type Params = Record<string, unknown>;
  type Call = (params?: Params) => Promise<any>;

  export interface ZulipClient {
    config: { realm: string; username: string; apiKey: string; apiURL: string };
    callEndpoint(path: string, method?: string, params?: Params): Promise<any>;
    accounts: { retrieve(): Promise<any> };
    streams: {
      retrieve: Call;
      getStreamId(params: Params | string): Promise<any>;
      subscriptions: { retrieve: Call };
      topics: { retrieve: Call };
      deleteById: Call;
    };
    messages: {
      retrieve: Call;
      send: Call;
      render(params: Params | string): Promise<any>;
      update: Call;
      flags: { add: Call; remove: Call };
      getById: Call;
      getHistoryById: Call;
      deleteReactionById: Call;
      deleteById: Call;
    };
    queues: { register: Call; deregister: Call };
    events: { retrieve: Call };
    users: {
      retrieve: Call;
      create: Call;
      me: {
        pointer: { retrieve: Call; update(id: number): Promise<any> };
        getProfile(): Promise<any>;
        subscriptions: { add: Call; remove: Call };
        alertWords: { retrieve: Call };
      };
    };
    emojis: { retrieve: Call };
    typing: { send: Call };
    reactions: { add: Call; remove: Call };
    server: { settings: Call };
    filters: { retrieve: Call };
    callOnEachEvent(callback: (event: any) => void, eventTypes?: string[] | null): Promise<never>;
  }

  export default function zulip(config: { realm: string; username: string; apiKey?: string; password?: string } | { zuliprc: string }): Promise<ZulipClient>;
}
