import pg from 'pg';
import { appendChannel, type HeardNotice, parseNotice } from './append-notices.js';
import { cutConnection } from './cut-connection.js';

export interface NoticeListenerOptions {
  readonly url: string;
  readonly onNotice: (notice: HeardNotice | 'resync') => void;
}

export interface NoticeListener {
  /** Connects and listens, once; later calls do nothing. */
  start(): void;
  /** Ends the connection and any reconnection under way. */
  close(): Promise<void>;
  /** Ends them without a word to the server (one that no longer answers would never acknowledge a goodbye). */
  abandon(): void;
}

const firstRetryMs = 100;
const longestRetryMs = 5_000;

/**
 * One connection of its own (LISTEN holds a connection for good, so not a pooled one) listening for
 * append notices (and deletions', on the same channel). When it breaks (the server restarted, the
 * connection was ended) it reconnects, waiting 100 ms, then twice as long each failed attempt up to
 * 5 s, for as long as the store is open; once listening again it reports 'resync', since notices
 * sent meanwhile are lost. The first connection reports 'resync' as well: notices committed between
 * the listener's registration and its LISTEN taking effect reach no one, and whoever follows a
 * session then reads what it missed.
 */
export function createNoticeListener({ url, onNotice }: NoticeListenerOptions): NoticeListener {
  let started = false;
  let closed = false;
  let client: pg.Client | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let retryMs = firstRetryMs;
  // The first LISTEN counts as a reconnection: nothing was heard before it.
  let missed = true;

  function retryLater(): void {
    if (closed || retryTimer !== undefined) return;
    missed = true;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void connect();
    }, retryMs);
    retryTimer.unref();
    retryMs = Math.min(retryMs * 2, longestRetryMs);
  }

  async function connect(): Promise<void> {
    const connection = new pg.Client({ connectionString: url, keepAlive: true });
    client = connection;
    let broken = false;
    const onBroken = () => {
      if (broken) return;
      broken = true;
      if (client === connection) client = undefined;
      connection.end().catch(() => undefined);
      retryLater();
    };
    connection.on('error', onBroken);
    connection.on('end', onBroken);
    connection.on('notification', (message) => {
      if (message.channel !== appendChannel) return;
      const notice = parseNotice(message.payload);
      if (notice !== undefined) onNotice(notice);
    });
    try {
      await connection.connect();
      await connection.query(`LISTEN ${appendChannel}`);
    } catch {
      onBroken();
      return;
    }
    if (broken) return;
    if (closed) {
      await connection.end().catch(() => undefined);
      return;
    }
    retryMs = firstRetryMs;
    if (missed) {
      missed = false;
      onNotice('resync');
    }
  }

  return {
    start() {
      if (started || closed) return;
      started = true;
      void connect();
    },
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      const connection = client;
      client = undefined;
      await connection?.end().catch(() => undefined);
    },
    abandon() {
      closed = true;
      clearTimeout(retryTimer);
      if (client) cutConnection(client);
      client = undefined;
    },
  };
}
