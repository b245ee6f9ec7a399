-- runs 0004: the reason an operator gave when cancelling a running run, kept until the
-- worker stops the run and writes it into the run.cancelled event.
ALTER TABLE runs ADD COLUMN cancel_reason TEXT;
