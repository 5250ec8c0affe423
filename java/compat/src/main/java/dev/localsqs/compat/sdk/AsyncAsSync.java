package dev.localsqs.compat.sdk;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * An {@link SqsClient} view of an {@link SqsAsyncClient}: each call goes to the async method of the
 * same name and waits for its future, so the async client runs the very same scenario steps as the
 * sync one (through its own HTTP client, marshallers and interceptors).
 */
final class AsyncAsSync {
  private AsyncAsSync() {}

  static SqsClient wrap(SqsAsyncClient async) {
    return (SqsClient)
        Proxy.newProxyInstance(
            SqsClient.class.getClassLoader(),
            new Class<?>[] {SqsClient.class},
            (proxy, method, args) -> {
              switch (method.getName()) {
                case "toString":
                  return "AsyncAsSync[" + async + "]";
                case "hashCode":
                  return System.identityHashCode(proxy);
                case "equals":
                  return proxy == args[0];
                default:
                  break;
              }
              Method target =
                  SqsAsyncClient.class.getMethod(method.getName(), method.getParameterTypes());
              Object result;
              try {
                result = target.invoke(async, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
              if (!(result instanceof CompletableFuture<?> future)) {
                return result;
              }
              try {
                return future.join();
              } catch (CompletionException e) {
                throw e.getCause() == null ? e : e.getCause();
              }
            });
  }
}
