"""graphrag-orm: GraphRAG on Neo4j with typed models and verified citations."""
