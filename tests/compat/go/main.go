// The compatibility scenario for the AWS SDK for Go, v1 (github.com/aws/aws-sdk-go) and v2
// (github.com/aws/aws-sdk-go-v2). Built by tests/compat/run.sh three ways:
//
//   - in GOPATH mode against Debian's packaged sources in /usr/share/gocode (no module proxy):
//     v1 1.44.133 and v2 with service/sqs 1.19.12, both speaking the AWS Query protocol;
//   - in module mode with -tags modproxy and go.mod: the current v2 from the Go module proxy,
//     which speaks AWS JSON 1.0;
//   - the same with -modfile=query.mod: service/sqs 1.26.0, the last v2 release on Query.
//
// and run as
//
//	localsqs-compat-go -sdk v1 -endpoint http://127.0.0.1:PORT -name go-v1
//	localsqs-compat-go -sdk v2 -endpoint http://127.0.0.1:PORT -name go-v2
//	localsqs-compat-go-current -sdk v2 -protocol json -endpoint ... -name go-v2-current
//
// Every request is recorded by an http.RoundTripper and the run fails if any used another
// protocol than -protocol. Exit status 0 means every step passed.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
)

func main() {
	endpoint := flag.String("endpoint", "", "server URL")
	sdk := flag.String("sdk", "v1", "v1 or v2")
	name := flag.String("name", "", "client name (queue prefix, evidence line)")
	protocol := flag.String("protocol", "query", "protocol every request must use")
	flag.Parse()
	if *endpoint == "" || *name == "" {
		fmt.Fprintln(os.Stderr, "usage: -endpoint URL -name NAME [-sdk v1|v2]")
		os.Exit(2)
	}
	rec := &recorder{next: http.DefaultTransport}
	httpClient := &http.Client{Transport: rec}
	prefix := fmt.Sprintf("compat-%s-%d", *name, os.Getpid())
	r := &runner{}
	scenario, ok := scenarios[*sdk]
	if !ok {
		fmt.Fprintf(os.Stderr, "-sdk %s is not built into this binary (it has %v)\n", *sdk, sdkNames())
		os.Exit(2)
	}
	steps := scenario(*endpoint, prefix, *protocol, httpClient, r)
	fmt.Printf("%s: %s, protocol expected %s\n", *name, versions[*sdk](), strings.ToUpper(*protocol))
	for i, s := range steps {
		if i > 0 && len(r.failures) > 0 && r.failures[0] == steps[0].title {
			break // nothing to run against without the queues
		}
		r.step(s.title, s.fn)
	}
	r.step("protocol evidence", func() { rec.check(*name, *protocol) })
	if len(r.skips) > 0 {
		fmt.Printf("       %d KNOWN_BUG skip(s): %s\n", len(r.skips), strings.Join(r.skips, "; "))
	}
	if len(r.failures) > 0 {
		os.Exit(1)
	}
}

type namedStep struct {
	title string
	fn    func()
}

// The SDKs built into this binary, registered by v1.go and v2.go: their scenario's steps and
// their version line.
var (
	scenarios = map[string]func(endpoint, prefix, protocol string, httpClient *http.Client, r *runner) []namedStep{}
	versions  = map[string]func() string{}
)

func sdkNames() []string {
	names := []string{}
	for n := range scenarios {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
