// The final value of each output of the run that ended.
import { Heading, Table, Text } from '@radix-ui/themes';
import { TableRoot } from '../TableRoot.jsx';

/** `finals`: each output's name, unit and last value; nothing while empty. */
export function Finals({ finals }) {
  if (finals.length === 0) return null;
  return (
    <>
      <Heading size="2" mt="4" mb="2">
        Final values
      </Heading>
      <TableRoot className="finals">
        <Table.Header>
          <Table.Row>
            <Table.ColumnHeaderCell>Output</Table.ColumnHeaderCell>
            <Table.ColumnHeaderCell justify="end">Final value</Table.ColumnHeaderCell>
          </Table.Row>
        </Table.Header>
        <Table.Body>
          {finals.map((f) => (
            <Table.Row key={f.name}>
              <Table.RowHeaderCell>
                {f.name}
                {f.unit && (
                  <Text as="div" size="1" color="gray">
                    {f.unit}
                  </Text>
                )}
              </Table.RowHeaderCell>
              <Table.Cell justify="end" className="run-number" data-testid={`final-${f.name}`}>
                {String(f.last)}
              </Table.Cell>
            </Table.Row>
          ))}
        </Table.Body>
      </TableRoot>
    </>
  );
}
