import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * Starts DynamoDB Local the way its ServerRunner does, but listening on 127.0.0.1 and on a port the kernel
 * picks: DynamoDB Local has no option for either (it binds every interface on a fixed port). Taking the
 * port from the kernel leaves no window in which another process can grab it between choice and bind.
 * The chosen endpoint goes to stdout as "listening http://127.0.0.1:PORT" for the start script.
 */
public final class LoopbackDynamoDBLocal {
    public static void main(String[] args) throws Exception {
        // The port argument only satisfies the option parser; the connector is rebound below.
        String[] withPort = new String[args.length + 2];
        System.arraycopy(args, 0, withPort, 0, args.length);
        withPort[args.length] = "-port";
        withPort[args.length + 1] = "8000";
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(withPort);

        // DynamoDBProxyServer keeps its Jetty server private; 2.6.1 is pinned in pom.xml.
        Field f = DynamoDBProxyServer.class.getDeclaredField("server");
        f.setAccessible(true);
        Server jetty = (Server) f.get(proxy);
        Connector[] connectors = jetty.getConnectors();
        if (connectors.length != 1 || !(connectors[0] instanceof ServerConnector)) {
            throw new IllegalStateException("unexpected Jetty connectors in DynamoDB Local: " + connectors.length);
        }
        ServerConnector connector = (ServerConnector) connectors[0];
        connector.setHost("127.0.0.1");
        connector.setPort(0);

        proxy.start();
        System.out.println("listening http://127.0.0.1:" + connector.getLocalPort());
        System.out.flush();
        proxy.join();
    }
}
