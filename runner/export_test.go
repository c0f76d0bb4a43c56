package runner

// Checks is how many checks after their first the run's waiting calls
// have made.
func Checks(r *Run) int64 { return r.checks.turns.Load() }

// LeftDeno is leftDeno for the external tests.
var LeftDeno = leftDeno
