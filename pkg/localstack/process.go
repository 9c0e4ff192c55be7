package localstack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a process gets to exit after SIGTERM before it is killed.
const stopGrace = 10 * time.Second

// Process is one program of the stack run as a child process, its output appended to a log file.
// It can be killed and started again, as a crash and a restart would; PeakRSS remembers the
// largest resident set of every run.
type Process struct {
	Name    string
	Path    string
	Args    []string
	Env     []string
	LogPath string

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	peakRSS int64
	runs    int
}

// Start starts the program; it fails when it is already running.
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("%s is already running as pid %d", p.Name, p.cmd.Process.Pid)
	}
	if err := os.MkdirAll(filepath.Dir(p.LogPath), 0o755); err != nil {
		return fmt.Errorf("creating log directory of %s, %w", p.Name, err)
	}
	logFile, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening log of %s, %w", p.Name, err)
	}
	p.runs++
	fmt.Fprintf(logFile, "==== %s run %d: %s %v\n", p.Name, p.runs, p.Path, p.Args)
	cmd := exec.Command(p.Path, p.Args...)
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group: an interrupt of the terminal reaches the stack, which stops its
	// children in order, rather than every child at once.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return fmt.Errorf("starting %s (%s), %w", p.Name, p.Path, err)
	}
	exited := make(chan struct{})
	p.cmd, p.exited = cmd, exited
	go func() {
		_ = cmd.Wait()
		_ = logFile.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		if usage, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			p.peakRSS = max(p.peakRSS, usage.Maxrss*1024) // Linux reports KiB
		}
		if p.cmd == cmd {
			p.cmd = nil
		}
		close(exited)
	}()
	return nil
}

// Running reports whether the program is running.
func (p *Process) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil
}

// Pid is the running program's process id, or 0.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Kill ends the program with SIGKILL, as a crash would, and waits for it to exit.
func (p *Process) Kill() error { return p.signal(syscall.SIGKILL, 0) }

// Stop asks the program to exit with SIGTERM and kills it if it has not within stopGrace.
func (p *Process) Stop() error { return p.signal(syscall.SIGTERM, stopGrace) }

func (p *Process) signal(sig syscall.Signal, grace time.Duration) error {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signalling %s, %w", p.Name, err)
	}
	if grace > 0 {
		timer := time.NewTimer(grace)
		defer timer.Stop()
		select {
		case <-exited:
			return nil
		case <-timer.C:
			if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
				return fmt.Errorf("killing %s, %w", p.Name, err)
			}
		}
	}
	<-exited
	return nil
}

// PeakRSS is the largest resident set size, in bytes, of any run that has exited, or of the
// running one so far (read from /proc).
func (p *Process) PeakRSS() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	peak := p.peakRSS
	if p.cmd != nil {
		if hwm, err := procHWM(p.cmd.Process.Pid); err == nil {
			peak = max(peak, hwm)
		}
	}
	return peak
}

// procHWM reads VmHWM, the peak resident set, of a running process.
func procHWM(pid int) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	var kib int64
	for line := range strings.Lines(string(raw)) {
		if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &kib); err == nil {
			return kib * 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// freeAddress returns a loopback address with a port nothing listens on now. Another program may
// take it before ours does; the stack's programs start within a second of asking, so it holds in
// practice.
func freeAddress() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port, %w", err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String(), nil
}

// waitHTTP waits until url answers 200 or ctx ends, checking every 200ms; p running is required
// throughout, so a program that dies at start fails fast with a pointer to its log.
func waitHTTP(ctx context.Context, p *Process, url string, get func(string) (int, error)) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		code, err := get(url)
		if err == nil && code == 200 {
			return nil
		}
		last = err
		if err == nil {
			last = fmt.Errorf("status %d", code)
		}
		if !p.Running() {
			return fmt.Errorf("%s exited at start; see %s", p.Name, p.LogPath)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s at %s (%w); see %s", p.Name, url, last, p.LogPath)
		case <-tick.C:
		}
	}
}
