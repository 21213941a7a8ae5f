import { GraphQLError, Lexer, Source, TokenKind } from 'graphql'

/**
 * Refuses a document whose brackets nest deeper than `maxNesting`, before graphql-js parses it: its
 * parser recurses once per level, so a list literal 20,000 deep overflowed the stack. The lexer is
 * iterative and linear, and counts `{`, `[` and `(` across selections, arguments and literals alike.
 * Returns quietly on lexical errors: the parser reports those with their position.
 */
export function assertDocumentNesting(query: string, maxNesting: number): void {
  let lexer: Lexer
  try {
    lexer = new Lexer(new Source(query))
  } catch {
    return
  }
  let depth = 0
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      if (
        token.kind === TokenKind.BRACE_L ||
        token.kind === TokenKind.BRACKET_L ||
        token.kind === TokenKind.PAREN_L
      ) {
        depth++
        if (depth > maxNesting) {
          throw new GraphQLError(
            `The document nests brackets more than ${maxNesting} levels deep (ENGRAM_MAX_QUERY_NESTING).`,
            { extensions: { code: 'QUERY_TOO_NESTED', limit: maxNesting, http: { status: 400 } } },
          )
        }
      } else if (
        token.kind === TokenKind.BRACE_R ||
        token.kind === TokenKind.BRACKET_R ||
        token.kind === TokenKind.PAREN_R
      ) {
        depth--
      }
    }
  } catch (error) {
    if (error instanceof GraphQLError && error.extensions.code === 'QUERY_TOO_NESTED') throw error
    // A lexical error: left for the parser, which names its position.
  }
}
