export function wranglerDevArgs(options: {
  config: string;
  port: number;
  inspectorPort: number;
  persist: string;
  vars: Record<string, string>;
}): string[];
