export { applyPostgresMigrations, MigrationError, postgresMigrationsDirectory } from './migrate.ts'
