import { initialMigration } from './0001-initial.js';
import { interactionsMigration } from './0002-interactions.js';
import { sessionModelAndProcessMigration } from './0003-session-model-and-process.js';
import { sessionSummaryMigration } from './0004-session-summary.js';
import { sessionListingIndexesMigration } from './0005-session-listing-indexes.js';
import { blobsForksAndCheckpointsMigration } from './0006-blobs-forks-and-checkpoints.js';
import { sessionWorkspaceStatusMigration } from './0007-session-workspace-status.js';
import { sessionFollowUpsAndLimitsMigration } from './0008-session-follow-ups-and-limits.js';
import { fewerPagesACommitMigration } from './0009-fewer-pages-a-commit.js';
import { logPrimerMigration } from './0010-log-primer.js';
import type { Migration } from './migration.js';

/** Every schema step, in order. Append only. */
export const migrations: readonly Migration[] = [
  initialMigration,
  interactionsMigration,
  sessionModelAndProcessMigration,
  sessionSummaryMigration,
  sessionListingIndexesMigration,
  blobsForksAndCheckpointsMigration,
  sessionWorkspaceStatusMigration,
  sessionFollowUpsAndLimitsMigration,
  fewerPagesACommitMigration,
  logPrimerMigration,
];

export const latestSchemaVersion = migrations.at(-1)?.version ?? 0;
