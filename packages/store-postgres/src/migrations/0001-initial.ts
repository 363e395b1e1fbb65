import type { Migration } from './migration.js';

// The schema store-sqlite reached after its seven migrations, in one step (see the ADR
// 2026-12-01-postgres-schema-and-append-check.md). Records are `json`, not `jsonb`: kept as the
// runtime wrote them, and able to hold "\u0000", which jsonb refuses (and text: so the title, the
// one free text on the row, is a json string too). Text the store orders by is
// COLLATE "C", so pages and cursors order as the other stores do, whatever the database's locale.
// `position` columns record first insertion (an upsert keeps the row's): the order sessions load in,
// and the tie-breaks of runs and interactions. No foreign keys, as in SQLite: the port does not
// promise that a session row is written before its runs or events.
export const initialMigration: Migration = {
  version: 1,
  name: 'initial',
  sql: `
    CREATE TABLE sessions (
      position bigint GENERATED ALWAYS AS IDENTITY,
      session_id text COLLATE "C" PRIMARY KEY,
      provider text NOT NULL,
      workspace json NOT NULL,
      workspace_status json,
      configuration json NOT NULL,
      ephemeral boolean NOT NULL,
      redact_input boolean NOT NULL,
      state text NOT NULL,
      active_run_id text,
      permission_mode text,
      model text,
      live_process json,
      provider_session_id text,
      forked_from json,
      copy_conversation json,
      usage json NOT NULL,
      title json,
      last_run_id text,
      last_run_outcome text,
      last_run_completed_at text,
      last_seq bigint NOT NULL,
      created_at text COLLATE "C" NOT NULL,
      updated_at text NOT NULL,
      last_activity_at text NOT NULL
    );
    CREATE INDEX sessions_by_position ON sessions (position);
    CREATE INDEX sessions_newest_first ON sessions (created_at, session_id);
    CREATE INDEX sessions_by_state_newest_first ON sessions (state, created_at, session_id);
    CREATE INDEX sessions_loaded_at_start ON sessions (session_id) WHERE state <> 'closed' OR live_process IS NOT NULL;

    CREATE TABLE runs (
      position bigint GENERATED ALWAYS AS IDENTITY,
      run_id text PRIMARY KEY,
      session_id text NOT NULL,
      status text NOT NULL,
      outcome text,
      error json,
      usage json,
      started_at text COLLATE "C" NOT NULL,
      completed_at text,
      checkpoint json
    );
    CREATE INDEX runs_by_session ON runs (session_id, started_at, position);

    -- The append check: one row per session holding its last stored seq, moved forward only by a
    -- commit that names the value it expects (see append-check.ts). The primary key of events is
    -- the second guard: a seq can be stored once.
    CREATE TABLE event_heads (
      session_id text PRIMARY KEY,
      last_seq bigint NOT NULL CHECK (last_seq > 0)
    );

    CREATE TABLE events (
      session_id text NOT NULL,
      seq bigint NOT NULL,
      type text NOT NULL,
      run_id text,
      at text NOT NULL,
      data json NOT NULL,
      PRIMARY KEY (session_id, seq)
    );

    CREATE TABLE receipts (
      command_id text PRIMARY KEY,
      fingerprint text NOT NULL,
      receipt json NOT NULL,
      at text NOT NULL
    );

    CREATE TABLE interactions (
      position bigint GENERATED ALWAYS AS IDENTITY,
      session_id text NOT NULL,
      interaction_ref text NOT NULL,
      run_id text NOT NULL,
      status text NOT NULL,
      request json NOT NULL,
      requested_at text COLLATE "C" NOT NULL,
      settled_at text,
      PRIMARY KEY (session_id, interaction_ref)
    );
    CREATE INDEX interactions_by_session ON interactions (session_id, requested_at, position);

    -- Content-addressed bytes, stored once and kept while a session refers to them.
    CREATE TABLE blobs (
      sha256 text PRIMARY KEY,
      media_type text NOT NULL,
      bytes bytea NOT NULL
    );
    CREATE TABLE blob_references (
      session_id text NOT NULL,
      sha256 text NOT NULL,
      PRIMARY KEY (session_id, sha256)
    );
    CREATE INDEX blob_references_by_blob ON blob_references (sha256);
  `,
};
