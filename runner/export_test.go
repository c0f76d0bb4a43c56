package runner

// PeakOf is peakOf for the external tests (package runner_test).
var PeakOf = peakOf
