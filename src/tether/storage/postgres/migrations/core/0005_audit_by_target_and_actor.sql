-- core 0005: the audit trail read newest first per object (run:<id>, memory:<id>…) and per
-- principal, a page at a time, walks an index instead of the whole trail.

CREATE INDEX audit_log_by_target ON audit_log (tenant_id, target, seq);
CREATE INDEX audit_log_by_actor ON audit_log (tenant_id, actor_id, seq);
