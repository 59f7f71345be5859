// Package load measures the xDS push pipeline under load: the daemon
// binary (built as users run it, in its own process so its CPU and heap are
// its own) serving N synthetic ADS clients on loopback that watch
// VirtualServices, while one VirtualService changes (through a real API
// server, or by a file write). See BenchmarkConvergence.
package load
