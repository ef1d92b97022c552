// Starts Neo4j Community from the jars tools/neo4j/pom.xml resolves.
// The Maven artifacts ship the server's bootstrapper but not the distribution's
// entry point class, so this is that entry point. Run in source-file mode:
//   java -cp 'target/lib/*' Launcher.java --home-dir=HOME --config-dir=HOME/conf
public final class Launcher {
    public static void main(String[] args) {
        int status = org.neo4j.server.NeoBootstrapper.start(new org.neo4j.server.CommunityBootstrapper(), args);
        if (status != 0) {
            System.exit(status);
        }
    }
}
