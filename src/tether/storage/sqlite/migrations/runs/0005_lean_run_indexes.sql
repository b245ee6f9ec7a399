-- runs 0005: a run's start, claim, steps and end write as few index entries as its queries
-- need. The by-status index leaves running runs out, so a step (which changes a running
-- run's updated_at, nothing else indexed) moves no index entry; running runs are found
-- through runs_running. The runnable index holds only scheduled runs (the only ones read
-- by resume time) and the children index only child runs.
DROP INDEX runs_by_status;
CREATE INDEX runs_by_status ON runs (tenant_id, status, updated_at)
    WHERE status <> 'running';
DROP INDEX runs_runnable;
CREATE INDEX runs_runnable ON runs (status, resume_at) WHERE status = 'scheduled';
DROP INDEX runs_children;
CREATE INDEX runs_children ON runs (tenant_id, parent_run_id)
    WHERE parent_run_id IS NOT NULL;
