// Kafka's authorized-operations bit fields (bit n = AclOperation code n) as a
// broker without an authorizer answers them: every operation the resource type
// supports (Kafka's AclEntry.supportedOperations). Requests that do not ask get
// the "not requested" sentinel (AUTHORIZED_OPERATIONS_OMITTED).

/** Kafka's "authorized operations not requested" sentinel (Integer.MIN_VALUE). */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

const READ = 3;
const WRITE = 4;
const CREATE = 5;
const DELETE = 6;
const ALTER = 7;
const DESCRIBE = 8;
const CLUSTER_ACTION = 9;
const DESCRIBE_CONFIGS = 10;
const ALTER_CONFIGS = 11;
const IDEMPOTENT_WRITE = 12;

function bits(...operations: number[]): number {
  return operations.reduce((field, op) => field | (1 << op), 0);
}

/** READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS. */
export const TOPIC_AUTHORIZED_OPERATIONS = bits(READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS);

/** READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS (DescribeGroups). */
export const GROUP_AUTHORIZED_OPERATIONS = bits(READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS);

/** CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE. */
export const CLUSTER_AUTHORIZED_OPERATIONS = bits(CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE);
