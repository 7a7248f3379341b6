// Structured JSON logs (winston). Every component gets a child logger tagged with its name.
import winston from 'winston';

export type Logger = winston.Logger;
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function createLogger(level: LogLevel = 'info', silent = false): Logger {
  return winston.createLogger({
    level,
    silent,
    format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Console({ stderrLevels: [...LOG_LEVELS] })],
  });
}

/** A logger that drops everything, for unit tests. */
export function nullLogger(): Logger {
  return createLogger('error', true);
}
