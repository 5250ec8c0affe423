package localsqstest_test

// The helper itself: options, reset, the clock, stopping, the binary's lookup and start-up errors.

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/localsqs/localsqs/go/localsqstest"
)

func queueNames(t *testing.T, client *sqs.Client) []string {
	t.Helper()
	out, err := client.ListQueues(t.Context(), &sqs.ListQueuesInput{})
	if err != nil {
		t.Fatalf("ListQueues: %v", err)
	}
	names := []string{}
	for _, u := range out.QueueUrls {
		names = append(names, u[strings.LastIndex(u, "/")+1:])
	}
	slices.Sort(names)
	return names
}

func createQueue(t *testing.T, client *sqs.Client, name string, attrs map[string]string) string {
	t.Helper()
	out, err := client.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		t.Fatalf("CreateQueue %s: %v", name, err)
	}
	return aws.ToString(out.QueueUrl)
}

func answers(endpoint string) bool {
	c := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: time.Second}
	resp, err := c.Get(endpoint + "/health")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

func TestStartAndCleanup(t *testing.T) {
	var srv *localsqstest.Server
	t.Run("inner", func(t *testing.T) {
		srv = localsqstest.Start(t)
		if want := "http://127.0.0.1:"; !strings.HasPrefix(srv.Endpoint(), want) || srv.Port() == 0 {
			t.Fatalf("endpoint %q, port %d", srv.Endpoint(), srv.Port())
		}
		h, err := srv.Health()
		if err != nil || h.Status != "ok" || !h.Ready || h.Mode != "memory" || h.Queues != 0 {
			t.Fatalf("health %+v, %v", h, err)
		}
		if srv.PID() <= 0 || srv.Binary() == "" {
			t.Fatalf("pid %d, binary %q", srv.PID(), srv.Binary())
		}
	})
	// The inner test's cleanup stopped it: a clean exit, the port closed, and Close again is fine.
	if answers(srv.Endpoint()) {
		t.Fatalf("the server still answers after its test ended")
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("Close after cleanup: %v (want the clean exit's nil)", err)
	}
}

func TestTwoServersAreIndependent(t *testing.T) {
	a, b := localsqstest.Start(t), localsqstest.Start(t)
	if a.Port() == b.Port() {
		t.Fatalf("same port %d", a.Port())
	}
	createQueue(t, a.Client(), "only-in-a", nil)
	if got := queueNames(t, a.Client()); !slices.Equal(got, []string{"only-in-a"}) {
		t.Fatalf("a: %v", got)
	}
	if got := queueNames(t, b.Client()); len(got) != 0 {
		t.Fatalf("b: %v", got)
	}
}

func TestClientAndConfig(t *testing.T) {
	srv := localsqstest.Start(t)
	client := srv.Client()
	o := client.Options()
	if o.Region != "us-east-1" || aws.ToString(o.BaseEndpoint) != srv.Endpoint() {
		t.Fatalf("region %q, endpoint %q", o.Region, aws.ToString(o.BaseEndpoint))
	}
	creds, err := o.Credentials.Retrieve(t.Context())
	if err != nil || creds.AccessKeyID != "test" || creds.SecretAccessKey != "test" {
		t.Fatalf("credentials %+v, %v", creds, err)
	}
	if o.DisableMessageChecksumValidation {
		t.Fatalf("the SDK's MD5 checks are off")
	}
	other := srv.Client(func(o *sqs.Options) { o.Region = "eu-west-1"; o.RetryMaxAttempts = 1 })
	if r := other.Options().Region; r != "eu-west-1" {
		t.Fatalf("override: region %q", r)
	}
	// Config() serves any client built from an aws.Config.
	fromConfig := sqs.NewFromConfig(srv.Config())
	createQueue(t, fromConfig, "from-config", nil)
	if got := queueNames(t, client); !slices.Equal(got, []string{"from-config"}) {
		t.Fatalf("queues %v", got)
	}
}

func TestRegionAndAccount(t *testing.T) {
	srv := localsqstest.Start(t, localsqstest.WithRegion("ap-south-1"), localsqstest.WithAccountID("111122223333"))
	client := srv.Client()
	url := createQueue(t, client, "q", nil)
	if url != srv.Endpoint()+"/111122223333/q" || url != srv.QueueURL("q") {
		t.Fatalf("queue URL %q", url)
	}
	out, err := client.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	if arn := out.Attributes["QueueArn"]; arn != "arn:aws:sqs:ap-south-1:111122223333:q" {
		t.Fatalf("ARN %q", arn)
	}
	if srv.Region() != "ap-south-1" || srv.AccountID() != "111122223333" || client.Options().Region != "ap-south-1" {
		t.Fatalf("region %q, account %q", srv.Region(), srv.AccountID())
	}
}

func TestResetRestoresTheConfigFileAndAdvanceMovesTheClock(t *testing.T) {
	config := filepath.Join(t.TempDir(), "queues.toml")
	toml := "[[queue]]\nname = \"declared\"\nattributes = { VisibilityTimeout = 30 }\n"
	if err := os.WriteFile(config, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := localsqstest.Start(t, localsqstest.WithConfigFile(config))
	client := srv.Client()
	if got := queueNames(t, client); !slices.Equal(got, []string{"declared"}) {
		t.Fatalf("at start: %v", got)
	}
	createQueue(t, client, "extra", nil)
	if err := srv.Reset(); err != nil {
		t.Fatal(err)
	}
	if got := queueNames(t, client); !slices.Equal(got, []string{"declared"}) {
		t.Fatalf("after reset: %v", got)
	}

	url := srv.QueueURL("declared")
	if _, err := client.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("x")}); err != nil {
		t.Fatal(err)
	}
	receive := func() []types.Message {
		out, err := client.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: &url,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{"ApproximateReceiveCount"}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Messages
	}
	if n := len(receive()); n != 1 {
		t.Fatalf("first receive: %d messages", n)
	}
	if n := len(receive()); n != 0 {
		t.Fatalf("visible during its visibility timeout: %d messages", n)
	}
	clock, err := srv.Advance(30 * time.Second)
	if err != nil || clock.OffsetMs != 30_000 {
		t.Fatalf("advance: %+v, %v", clock, err)
	}
	again := receive()
	if len(again) != 1 || again[0].Attributes["ApproximateReceiveCount"] != "2" {
		t.Fatalf("after the advance: %+v", again)
	}
	if clock, err := srv.Advance(500 * time.Millisecond); err != nil || clock.OffsetMs != 30_500 {
		t.Fatalf("a fraction of a second: %+v, %v", clock, err)
	}
}

func TestDataDirSurvivesARestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "nested") // created if missing
	first, err := localsqstest.New(localsqstest.WithDataDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := first.Health(); h.Mode != "durable" {
		t.Fatalf("mode %q", h.Mode)
	}
	url := createQueue(t, first.Client(), "durable", nil)
	if _, err := first.Client().SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("kept")}); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second := localsqstest.Start(t, localsqstest.WithDataDir(dir))
	url = second.QueueURL("durable")
	out, err := second.Client().ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 1})
	if err != nil || len(out.Messages) != 1 || aws.ToString(out.Messages[0].Body) != "kept" {
		t.Fatalf("after the restart: %+v, %v", out, err)
	}
}

func TestArgsAndEnv(t *testing.T) {
	srv := localsqstest.Start(t, localsqstest.WithArgs("--max-queues", "1"), localsqstest.WithEnv("RUST_LOG=debug"))
	client := srv.Client(func(o *sqs.Options) { o.RetryMaxAttempts = 1 })
	createQueue(t, client, "one", nil)
	_, err := client.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("two")})
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "OverLimit" {
		t.Fatalf("second CreateQueue past --max-queues 1: %v", err)
	}
	if !strings.Contains(srv.Output(), "CreateQueue") { // RUST_LOG=debug logs each request
		t.Fatalf("no request in the log:\n%s", srv.Output())
	}
}

// postReset sends POST /_localsqs/reset itself, with an Authorization header unless it is "", and
// returns the status.
func postReset(t *testing.T, srv *localsqstest.Server, authorization string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.Endpoint()+"/_localsqs/reset", nil)
	if err != nil {
		t.Fatal(err)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	c := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestAdminToken(t *testing.T) {
	srv := localsqstest.Start(t, localsqstest.WithAdminToken("s3cret"))
	// The server is guarded: without the token (or with another one) an admin call gets 401.
	if code := postReset(t, srv, ""); code != http.StatusUnauthorized {
		t.Fatalf("POST /_localsqs/reset without the token: %d, want 401", code)
	}
	if code := postReset(t, srv, "Bearer wrong"); code != http.StatusUnauthorized {
		t.Fatalf("POST /_localsqs/reset with another token: %d, want 401", code)
	}
	if srv.AdminToken() != "s3cret" {
		t.Fatalf("AdminToken() %q", srv.AdminToken())
	}
	createQueue(t, srv.Client(), "dropped", nil)
	if err := srv.Reset(); err != nil {
		t.Fatalf("Reset with the token: %v", err)
	}
	if got := queueNames(t, srv.Client()); len(got) != 0 {
		t.Fatalf("after reset: %v", got)
	}
	if clock, err := srv.Advance(10 * time.Second); err != nil || clock.OffsetMs != 10_000 {
		t.Fatalf("Advance with the token: %+v, %v", clock, err)
	}
	if h, err := srv.Health(); err != nil || !h.Ready {
		t.Fatalf("health %+v, %v", h, err)
	}

	// The token given to the server some other way is found and sent too.
	for name, opts := range map[string][]localsqstest.Option{
		"WithArgs, two arguments": {localsqstest.WithArgs("--enforce-cooloffs", "--admin-token", "s3cret")},
		"WithArgs, one argument":  {localsqstest.WithArgs("--admin-token=s3cret")},
		"WithEnv":                 {localsqstest.WithEnv("LOCALSQS_ADMIN_TOKEN=s3cret")},
	} {
		t.Run(name, func(t *testing.T) {
			srv := localsqstest.Start(t, opts...)
			if code := postReset(t, srv, ""); code != http.StatusUnauthorized {
				t.Fatalf("POST /_localsqs/reset without the token: %d, want 401", code)
			}
			if err := srv.Reset(); err != nil {
				t.Fatalf("Reset: %v", err)
			}
			if _, err := srv.Advance(time.Second); err != nil {
				t.Fatalf("Advance: %v", err)
			}
		})
	}
	t.Run("the environment", func(t *testing.T) {
		t.Setenv("LOCALSQS_ADMIN_TOKEN", "from-env")
		srv := localsqstest.Start(t)
		if code := postReset(t, srv, ""); code != http.StatusUnauthorized {
			t.Fatalf("POST /_localsqs/reset without the token: %d, want 401", code)
		}
		if err := srv.Reset(); err != nil || srv.AdminToken() != "from-env" {
			t.Fatalf("Reset: %v (token %q)", err, srv.AdminToken())
		}
	})
	t.Run("none", func(t *testing.T) {
		t.Setenv("LOCALSQS_ADMIN_TOKEN", "")
		srv := localsqstest.Start(t)
		if code := postReset(t, srv, ""); code != http.StatusOK || srv.AdminToken() != "" {
			t.Fatalf("an open server: %d (token %q)", code, srv.AdminToken())
		}
	})
}

func TestTheEnvironmentsSettingsDoNotLeakIn(t *testing.T) {
	leak := filepath.Join(t.TempDir(), "leak")
	t.Setenv("LOCALSQS_DATA_DIR", leak)
	t.Setenv("LOCALSQS_ACCOUNT_ID", "999999999999")
	srv := localsqstest.Start(t)
	if h, _ := srv.Health(); h.Mode != "memory" {
		t.Fatalf("mode %q", h.Mode)
	}
	if _, err := os.Stat(leak); err == nil {
		t.Fatalf("%s was created", leak)
	}
	if url := createQueue(t, srv.Client(), "q", nil); url != srv.Endpoint()+"/000000000000/q" {
		t.Fatalf("queue URL %q", url)
	}
}

func TestFixedPort(t *testing.T) {
	port, err := localsqstest.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	srv := localsqstest.Start(t, localsqstest.WithPort(port))
	if srv.Port() != port || srv.Endpoint() != "http://127.0.0.1:"+strconv.Itoa(port) {
		t.Fatalf("endpoint %q", srv.Endpoint())
	}
	// The port is taken: the second server fails, and is not fooled by the first one's answers.
	_, err = localsqstest.New(localsqstest.WithPort(port))
	if !errors.Is(err, localsqstest.ErrStart) || !strings.Contains(strings.ToLower(err.Error()), "in use") {
		t.Fatalf("second server on port %d: %v", port, err)
	}
}

// script writes an executable shell script named name into a new directory and returns its path.
func script(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestStartErrors(t *testing.T) {
	t.Run("exits during start-up", func(t *testing.T) {
		bad := script(t, "localsqs", "echo 'cannot start: boom' >&2\nexit 3")
		_, err := localsqstest.New(localsqstest.WithBinary(bad))
		if !errors.Is(err, localsqstest.ErrStart) || !strings.Contains(err.Error(), "exit status 3") ||
			!strings.Contains(err.Error(), "cannot start: boom") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("never answers", func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "pid")
		silent := script(t, "localsqs", "echo $$ > "+pidFile+"\nexec sleep 30")
		t0 := time.Now()
		_, err := localsqstest.New(localsqstest.WithBinary(silent), localsqstest.WithStartTimeout(300*time.Millisecond))
		if !errors.Is(err, localsqstest.ErrStart) || !strings.Contains(err.Error(), "within 300ms") {
			t.Fatalf("error %v", err)
		}
		if d := time.Since(t0); d > 5*time.Second {
			t.Fatalf("took %v", d)
		}
		raw, _ := os.ReadFile(pidFile)
		pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
		if pid == 0 || syscall.Kill(pid, 0) == nil {
			t.Fatalf("process %d is still running", pid)
		}
	})
	t.Run("missing binary", func(t *testing.T) {
		_, err := localsqstest.New(localsqstest.WithBinary(filepath.Join(t.TempDir(), "no", "localsqs")))
		if !errors.Is(err, localsqstest.ErrBinaryNotFound) || !strings.Contains(err.Error(), "not an executable file") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("reset of a stopped server", func(t *testing.T) {
		srv, err := localsqstest.New()
		if err != nil {
			t.Fatal(err)
		}
		srv.Close()
		if err := srv.Reset(); err == nil {
			t.Fatalf("Reset of a stopped server succeeded")
		}
	})
}

func TestFindBinaryOrder(t *testing.T) {
	opt := script(t, "localsqs", "exit 0")
	bin := script(t, "localsqs", "exit 0")
	binary := script(t, "localsqs", "exit 0")
	onPath := script(t, "localsqs", "exit 0")
	check := func(what, arg, want string) {
		t.Helper()
		got, err := localsqstest.FindBinary(arg)
		if err != nil || got != want {
			t.Fatalf("%s: got %q, %v; want %q", what, got, err, want)
		}
	}
	t.Setenv("PATH", "/nonexistent"+string(os.PathListSeparator)+filepath.Dir(onPath))
	t.Setenv("LOCALSQS_BIN", bin)
	t.Setenv("LOCALSQS_BINARY", binary)
	check("WithBinary", opt, opt)
	check("LOCALSQS_BIN", "", bin)
	t.Setenv("LOCALSQS_BIN", "")
	check("LOCALSQS_BINARY", "", binary)
	t.Setenv("LOCALSQS_BINARY", "")
	check("PATH", "", onPath)
	t.Setenv("PATH", "")
	if repo := localsqstest.RepositoryBinary(); fileExists(repo) {
		check("the repository's target/release", "", filepath.Clean(repo))
	} else if _, err := localsqstest.FindBinary(""); !errors.Is(err, localsqstest.ErrBinaryNotFound) ||
		!strings.Contains(err.Error(), "LOCALSQS_BIN, PATH") {
		t.Fatalf("nothing found: %v", err)
	}

	tool := script(t, "my-localsqs", "exit 0")
	t.Setenv("PATH", filepath.Dir(tool))
	t.Setenv("LOCALSQS_BIN", "my-localsqs")
	check("a bare name in LOCALSQS_BIN, on PATH", "", tool)

	notExec := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(notExec, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LOCALSQS_BIN", notExec)
	if _, err := localsqstest.FindBinary(""); !errors.Is(err, localsqstest.ErrBinaryNotFound) ||
		!strings.Contains(err.Error(), "$LOCALSQS_BIN is not an executable") {
		t.Fatalf("not executable: %v", err)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return path != "" && err == nil
}

// A test binary killed without running its cleanups (here: by a signal, as go test's -timeout
// or a Ctrl-C does) takes its servers with it: Linux's parent-death signal.
func TestServerDiesWithTheTestBinary(t *testing.T) {
	if os.Getenv("LOCALSQSTEST_CHILD") == "1" {
		srv := localsqstest.Start(t)
		os.Stdout.WriteString("PID " + strconv.Itoa(srv.PID()) + "\n")
		time.Sleep(time.Minute) // killed before this ends
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerDiesWithTheTestBinary$", "-test.v")
	cmd.Env = append(os.Environ(), "LOCALSQSTEST_CHILD=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	buf := make([]byte, 4096)
	var seen string
	for deadline := time.Now().Add(20 * time.Second); pid == 0 && time.Now().Before(deadline); {
		n, err := stdout.Read(buf)
		seen += string(buf[:n])
		if i := strings.Index(seen, "PID "); i >= 0 && strings.Contains(seen[i:], "\n") {
			pid, _ = strconv.Atoi(seen[i+4 : i+strings.Index(seen[i:], "\n")])
		}
		if err != nil {
			break
		}
	}
	if pid == 0 {
		_ = cmd.Process.Kill()
		t.Fatalf("the child test printed no server pid: %q", seen)
	}
	_ = cmd.Process.Kill() // SIGKILL: no cleanup runs in the child
	_ = cmd.Wait()
	for i := 0; i < 100; i++ {
		if syscall.Kill(pid, 0) != nil || isZombie(pid) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("server %d outlived its killed test binary", pid)
}

// isZombie: an exited server whose new parent (PID 1 in a container) has not reaped it yet.
func isZombie(pid int) bool {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}
