//go:build modproxy

// The v2 client as the module-proxy releases (go.mod: current; query.mod: service/sqs 1.26.0)
// build it today: BaseEndpoint, which both have, as their documentation says to use.
package main

import (
	"context"
	"net/http"
	"runtime/debug"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// v2SqsModuleVersion: the service/sqs version this binary was built with.
func v2SqsModuleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/aws/aws-sdk-go-v2/service/sqs" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func newV2Client(endpoint string, httpClient *http.Client) *sqs.Client {
	return sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"}, nil
		}),
		HTTPClient: httpClient,
		Retryer:    aws.NopRetryer{},
	})
}
