// Shape of the schemas the generator emits for tests (schemas.ts).
export type TypeSchema =
  | {
      kind:
        | 'int8' | 'int16' | 'int32' | 'int64' | 'uint16' | 'uint32' | 'float64' | 'bool'
        | 'string' | 'bytes' | 'records' | 'uuid';
    }
  | { kind: 'array'; elem: TypeSchema }
  | { kind: 'struct'; struct: string };

export type Range = [number, number];

export interface FieldSchema {
  prop: string;
  type: TypeSchema;
  versions: Range;
  nullable: Range | null;
  tagged: { tag: number; versions: Range } | null;
  /** Per-field flexible versions override (null = never flexible). */
  flexible?: Range | null;
  /** The JSON `default`, as a string, or null when absent. */
  default: string | null;
}

export interface MessageSchema {
  name: string;
  kind: string;
  api: string;
  apiKey: number;
  valid: Range;
  flexible: Range | null;
  fields: FieldSchema[];
  structs: Record<string, FieldSchema[]>;
}
