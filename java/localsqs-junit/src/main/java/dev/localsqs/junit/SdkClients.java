package dev.localsqs.junit;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.SqsAsyncClientBuilder;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.SqsClientBuilder;

/**
 * The SDK clients of one server. Kept apart from {@link LocalSqsServer} so that the SDK classes are
 * loaded only when a client is asked for: without the SDK on the class path, everything else works.
 */
final class SdkClients {
  private final LocalSqsServer server;
  private SqsClient sync;
  private SqsAsyncClient async;

  SdkClients(LocalSqsServer server) {
    this.server = server;
  }

  static SqsClientBuilder syncBuilder(LocalSqsServer server) {
    return SqsClient.builder()
        .endpointOverride(server.endpoint())
        .region(Region.of(server.region()))
        .credentialsProvider(credentials());
  }

  static SqsAsyncClientBuilder asyncBuilder(LocalSqsServer server) {
    return SqsAsyncClient.builder()
        .endpointOverride(server.endpoint())
        .region(Region.of(server.region()))
        .credentialsProvider(credentials());
  }

  private static StaticCredentialsProvider credentials() {
    return StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test"));
  }

  synchronized SqsClient sync() {
    if (sync == null) {
      sync = syncBuilder(server).build();
    }
    return sync;
  }

  synchronized SqsAsyncClient async() {
    if (async == null) {
      async = asyncBuilder(server).build();
    }
    return async;
  }

  synchronized void close() {
    if (sync != null) {
      sync.close();
      sync = null;
    }
    if (async != null) {
      async.close();
      async = null;
    }
  }
}
