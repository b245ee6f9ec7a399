-- runs 0005: the by-status index leaves running runs out, so a step (which changes a running
-- run's updated_at, nothing else indexed) moves no index entry. Queries of running runs
-- find them through runs_running; the others add status <> 'running' to use this one.
DROP INDEX runs_by_status;
CREATE INDEX runs_by_status ON runs (tenant_id, status, updated_at)
    WHERE status <> 'running';
