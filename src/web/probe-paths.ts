/** The probes' paths: the REST door serves them (src/http/routes/health.ts); the in-flight bound never refuses them. */
export const HEALTH_PATH = '/healthz';
export const READINESS_PATH = '/readyz';
