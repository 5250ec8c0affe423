// Package localsqstest starts a localsqs server (a single-binary, wire-compatible Amazon SQS
// emulator) for Go tests and hands back its endpoint and an aws-sdk-go-v2 SQS client.
//
//	func TestOrders(t *testing.T) {
//		srv := localsqstest.Start(t)     // a free port; stopped by t.Cleanup
//		client := srv.Client()           // *sqs.Client: endpoint, region, test/test credentials
//		out, err := client.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("orders")})
//		...
//		srv.Advance(30 * time.Second)    // a 30 s visibility timeout passes at once
//	}
//
// The binary is the one given with [WithBinary], else $LOCALSQS_BIN (or $LOCALSQS_BINARY, the
// Python package's name for it), else localsqs on PATH, else the repository's
// target/release/localsqs when this package is used from a checkout (see [FindBinary]).
//
// [Start] gives each test its own server; a server starts in a few milliseconds. To share one
// server between the tests of a package, start it in TestMain with [New], call [Server.Reset]
// where a test needs a clean slate, and [Server.Close] it at the end.
package localsqstest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

const (
	// DefaultRegion is the region of queue ARNs and clients unless [WithRegion] says otherwise.
	DefaultRegion = "us-east-1"
	// DefaultAccountID is the account of queue URLs and ARNs unless [WithAccountID] says otherwise.
	DefaultAccountID = "000000000000"

	outputLimit = 1 << 20
	quietGrace  = 500 * time.Millisecond
)

// Settings the binary reads from the environment that a start passes explicitly: removed from
// the child's environment, so that Start(t) means "in memory, defaults" even in a shell that
// exports, say, LOCALSQS_DATA_DIR for a long-running instance.
var managedEnv = []string{"LOCALSQS_HOST", "LOCALSQS_PORT", "LOCALSQS_DATA_DIR", "LOCALSQS_REGION",
	"LOCALSQS_ACCOUNT_ID", "LOCALSQS_CONFIG"}

// ErrStart is wrapped by the errors of a server that exited during start-up or did not answer
// GET /health in time; their text carries the server's output.
var ErrStart = errors.New("localsqs did not start")

type settings struct {
	binary, host, dataDir, config, region, accountID string
	adminToken                                       string
	port                                             int
	args, env                                        []string
	startTimeout, stopTimeout                        time.Duration
}

// An Option changes how [Start] and [New] run the server.
type Option func(*settings)

// WithBinary runs this executable (a path, or a name looked up on PATH).
func WithBinary(path string) Option { return func(s *settings) { s.binary = path } }

// WithPort listens on this port instead of a free one.
func WithPort(port int) Option { return func(s *settings) { s.port = port } }

// WithHost listens on this address instead of 127.0.0.1.
func WithHost(host string) Option { return func(s *settings) { s.host = host } }

// WithDataDir keeps the server's state durably in dir (--data-dir), created if missing. Two
// servers started one after the other on the same directory see the same queues and messages.
func WithDataDir(dir string) Option { return func(s *settings) { s.dataDir = dir } }

// WithConfigFile applies a TOML file of queues, fault rules and clock settings at start
// (--config); [Server.Reset] restores what it declares.
func WithConfigFile(path string) Option { return func(s *settings) { s.config = path } }

// WithRegion sets the region of queue ARNs (--region) and of [Server.Client].
func WithRegion(region string) Option { return func(s *settings) { s.region = region } }

// WithAccountID sets the account of queue URLs and ARNs (--account-id).
func WithAccountID(id string) Option { return func(s *settings) { s.accountID = id } }

// WithArgs appends command-line arguments, e.g. WithArgs("--enforce-cooloffs").
func WithArgs(args ...string) Option {
	return func(s *settings) { s.args = append(s.args, args...) }
}

// WithAdminToken starts the server with --admin-token token, so that its admin endpoints (all but
// /health) need Authorization: Bearer token, and sends that header on every admin call
// ([Server.Reset], [Server.Advance]). Without it the helper still sends the token the server was
// given otherwise: an --admin-token in [WithArgs] (not to be combined with this option: the
// server refuses the flag twice), else LOCALSQS_ADMIN_TOKEN in the server's environment
// ([WithEnv], else the test's). An empty token means none.
func WithAdminToken(token string) Option { return func(s *settings) { s.adminToken = token } }

// WithEnv adds KEY=VALUE entries to the child's environment (e.g. "RUST_LOG=debug").
func WithEnv(kv ...string) Option { return func(s *settings) { s.env = append(s.env, kv...) } }

// WithStartTimeout bounds the wait for GET /health (default 30 s).
func WithStartTimeout(d time.Duration) Option { return func(s *settings) { s.startTimeout = d } }

// WithStopTimeout bounds the wait after SIGTERM before the server is killed (default 10 s).
func WithStopTimeout(d time.Duration) Option { return func(s *settings) { s.stopTimeout = d } }

// Server is a running localsqs process.
type Server struct {
	binary, host, endpoint, region, accountID string
	adminToken                                string // sent on admin calls; "" for none
	port                                      int
	stopTimeout                               time.Duration

	cmd     *exec.Cmd
	out     *output
	done    chan struct{} // closed when the process has exited
	waitErr error         // cmd.Wait's answer, read after done
	http    *http.Client

	closeOnce sync.Once
	closeErr  error
}

// Start runs a server for the test, fails the test if it cannot, and stops it with t.Cleanup;
// when the test failed, the server's log goes to the test's log.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := New(opts...)
	if err != nil {
		t.Fatalf("localsqstest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("localsqstest: stopping the server: %v", err)
		}
		if t.Failed() {
			t.Logf("localsqs output:\n%s", strings.TrimRight(s.Output(), "\n"))
		}
	})
	return s
}

// New runs a server and waits until GET /health answers. The caller must Close it. Without
// [WithPort] a free port is picked, and another one tried (three times in all) if the server
// could not bind it.
func New(opts ...Option) (*Server, error) {
	st := settings{host: "127.0.0.1", startTimeout: 30 * time.Second, stopTimeout: 10 * time.Second}
	for _, o := range opts {
		o(&st)
	}
	binary, err := FindBinary(st.binary)
	if err != nil {
		return nil, err
	}
	attempts := 1
	if st.port == 0 {
		attempts = 3
	}
	for attempt := 1; ; attempt++ {
		port := st.port
		if port == 0 {
			if port, err = FreePort(connectHost(st.host)); err != nil {
				return nil, err
			}
		}
		s, err := launch(st, binary, port)
		if err == nil {
			return s, nil
		}
		if attempt >= attempts || !errors.Is(err, ErrStart) || !strings.Contains(strings.ToLower(err.Error()), "in use") {
			return nil, err
		}
	}
}

func (st *settings) command(port int) []string {
	args := []string{"--host", st.host, "--port", strconv.Itoa(port)}
	if st.dataDir != "" {
		args = append(args, "--data-dir", st.dataDir)
	}
	if st.config != "" {
		args = append(args, "--config", st.config)
	}
	if st.region != "" {
		args = append(args, "--region", st.region)
	}
	if st.accountID != "" {
		args = append(args, "--account-id", st.accountID)
	}
	if st.adminToken != "" {
		args = append(args, "--admin-token", st.adminToken)
	}
	return append(args, st.args...)
}

// token is the admin token the server runs with, as it reads it: [WithAdminToken], else the
// extra arguments' --admin-token X or --admin-token=X, else LOCALSQS_ADMIN_TOKEN in env, the
// child's environment (where, as in exec.Cmd, the last entry of a name counts).
func (st *settings) token(env []string) string {
	if st.adminToken != "" {
		return st.adminToken
	}
	token, found := "", false
	for i := 0; i < len(st.args); i++ {
		if v, ok := strings.CutPrefix(st.args[i], "--admin-token="); ok {
			token, found = v, true
		} else if st.args[i] == "--admin-token" && i+1 < len(st.args) {
			i++
			token, found = st.args[i], true
		}
	}
	if found {
		return token
	}
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "LOCALSQS_ADMIN_TOKEN="); ok {
			return v
		}
	}
	return ""
}

func childEnv(extra []string) []string {
	env := []string{}
	noColor := false
outer:
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		for _, m := range managedEnv {
			if name == m {
				continue outer
			}
		}
		noColor = noColor || name == "NO_COLOR"
		env = append(env, kv)
	}
	if !noColor {
		env = append(env, "NO_COLOR=1") // the log goes to a buffer, not a terminal
	}
	return append(env, extra...)
}

func launch(st settings, binary string, port int) (*Server, error) {
	if st.dataDir != "" {
		if err := os.MkdirAll(st.dataDir, 0o755); err != nil {
			return nil, err
		}
	}
	args := st.command(port)
	cmd := exec.Command(binary, args...)
	cmd.Env = childEnv(st.env)
	token := st.token(cmd.Env)
	out := &output{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 2 * time.Second // a grandchild holding the pipes cannot stall Wait
	setParentDeathSignal(cmd)
	s := &Server{
		binary: binary, host: st.host, port: port, stopTimeout: st.stopTimeout,
		endpoint:  "http://" + net.JoinHostPort(connectHost(st.host), strconv.Itoa(port)),
		region:    firstOf(st.region, DefaultRegion),
		accountID: firstOf(st.accountID, DefaultAccountID),
		cmd:       cmd, out: out, done: make(chan struct{}), adminToken: token,
		// A proxy from the environment must never sit between a test and its local server.
		http: &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 10 * time.Second},
	}
	started := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot run the localsqs binary %s: %w", binary, err)
	}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	describe := func() string {
		return fmt.Sprintf("(command: %s %s). Its output:\n%s", binary, strings.Join(args, " "),
			firstOf(strings.TrimRight(out.String(), "\n"), "(nothing)"))
	}
	deadline := started.Add(st.startTimeout)
	var lastErr error
	for {
		select {
		case <-s.done:
			s.http.CloseIdleConnections()
			return nil, fmt.Errorf("%w: it exited during start-up (%v) %s", ErrStart, s.waitErr, describe())
		default:
		}
		h, err := s.Health()
		// The answer must come from this child: another process may hold the port (a server left
		// over on a fixed port), and this one is then about to fail to bind it. The child logs
		// "localsqs is serving" once it listens; when its log level hides that line, it must have
		// lived for a moment instead.
		ours := strings.Contains(out.String(), "localsqs is serving") || time.Since(started) > quietGrace
		if err == nil && h.Ready && ours && s.running() {
			return s, nil
		}
		if err != nil {
			lastErr = err
		}
		if time.Now().After(deadline) {
			_ = s.Close()
			return nil, fmt.Errorf("%w: no answer to GET /health within %v on %s (last error: %v) %s",
				ErrStart, st.startTimeout, s.endpoint, lastErr, describe())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func connectHost(host string) string {
	switch host {
	case "", "0.0.0.0":
		return "127.0.0.1"
	case "::", "[::]":
		return "::1"
	}
	return strings.Trim(host, "[]")
}

// FreePort returns a TCP port that was free a moment ago on host.
func FreePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) running() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// Close stops the server: SIGTERM, then SIGKILL after the stop timeout. It returns nil when the
// server shut down cleanly (exit status 0), and the same answer when called again.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		defer s.http.CloseIdleConnections()
		if s.running() {
			_ = s.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-s.done:
			case <-time.After(s.stopTimeout):
				_ = s.cmd.Process.Kill()
				<-s.done
				s.closeErr = fmt.Errorf("localsqs did not stop within %v of SIGTERM and was killed", s.stopTimeout)
				return
			}
		} else {
			<-s.done
		}
		s.closeErr = s.waitErr
	})
	return s.closeErr
}

// Endpoint is http://host:port, for an SDK's BaseEndpoint.
func (s *Server) Endpoint() string { return s.endpoint }

// Port is the port the server listens on.
func (s *Server) Port() int { return s.port }

// Region is the region of queue ARNs and of [Server.Client].
func (s *Server) Region() string { return s.region }

// AccountID is the account of queue URLs and ARNs.
func (s *Server) AccountID() string { return s.accountID }

// AdminToken is the token the admin calls send as Authorization: Bearer (see [WithAdminToken]),
// or "" when the server's admin endpoints are open.
func (s *Server) AdminToken() string { return s.adminToken }

// Binary is the executable that runs.
func (s *Server) Binary() string { return s.binary }

// PID is the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Output is everything the server wrote to stdout and stderr (its log), the last MiB of it.
func (s *Server) Output() string { return s.out.String() }

// QueueURL is the URL of the named queue of this server's account, whether or not it exists.
func (s *Server) QueueURL(name string) string {
	return s.endpoint + "/" + s.accountID + "/" + name
}

// Config is an aws.Config for this server: region, BaseEndpoint and static test/test
// credentials. sqs.NewFromConfig(srv.Config()) is what [Server.Client] returns; other code that
// takes an aws.Config can use it too.
func (s *Server) Config() aws.Config {
	return aws.Config{
		Region:       s.region,
		BaseEndpoint: aws.String(s.endpoint),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test", Source: "localsqstest"}, nil
		}),
	}
}

// Client is a new SQS client for this server (see [Server.Config]); optFns change its options,
// as in sqs.NewFromConfig. The SDK's MD5 checks of message bodies stay on.
func (s *Server) Client(optFns ...func(*sqs.Options)) *sqs.Client {
	return sqs.NewFromConfig(s.Config(), optFns...)
}

// Health is the answer of GET /health.
type Health struct {
	Status string `json:"status"`
	Live   bool   `json:"live"`
	Ready  bool   `json:"ready"`
	Mode   string `json:"mode"` // "memory" or "durable"
	Queues int    `json:"queues"`
}

// Clock is the answer of POST /_localsqs/clock.
type Clock struct {
	NowMs    int64 `json:"now_ms"`
	OffsetMs int64 `json:"offset_ms"`
	Frozen   bool  `json:"frozen"`
}

func (s *Server) admin(method, path string, body, into any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.endpoint+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.adminToken != "" {
		req.Header.Set("Authorization", "Bearer "+s.adminToken)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%s %s is not supported by this localsqs binary (404); it may be older than this package", method, path)
	case resp.StatusCode == http.StatusUnauthorized && s.adminToken == "":
		return fmt.Errorf("%s %s answered 401: the server needs its admin token (WithAdminToken): %s", method, path, raw)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("%s %s answered %d: %s", method, path, resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("%s %s: %w: %s", method, path, err, raw)
	}
	return nil
}

// Health asks GET /health.
func (s *Server) Health() (Health, error) {
	var h Health
	err := s.admin(http.MethodGet, "/health", nil, &h)
	return h, err
}

// Reset returns the server to its starting state (POST /_localsqs/reset): every queue and
// message is dropped, then the queues, fault rules and clock of the config file are restored.
func (s *Server) Reset() error {
	var answer struct {
		Reset bool `json:"reset"`
	}
	if err := s.admin(http.MethodPost, "/_localsqs/reset", nil, &answer); err != nil {
		return err
	}
	if !answer.Reset {
		return errors.New("localsqs: reset failed")
	}
	return nil
}

// Advance moves the server's clock forward by d (POST /_localsqs/clock): visibility timeouts,
// delays and retention then behave as if that time had passed, and parked long polls see it at
// once. It returns the clock's state after the move.
func (s *Server) Advance(d time.Duration) (Clock, error) {
	var c Clock
	err := s.admin(http.MethodPost, "/_localsqs/clock", map[string]float64{"advance_seconds": d.Seconds()}, &c)
	return c, err
}

// output keeps the last outputLimit bytes a process writes.
type output struct {
	mu  sync.Mutex
	buf []byte
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf = append(o.buf, p...)
	if over := len(o.buf) - outputLimit; over > 0 {
		o.buf = append(o.buf[:0], o.buf[over:]...)
	}
	return len(p), nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return string(o.buf)
}
